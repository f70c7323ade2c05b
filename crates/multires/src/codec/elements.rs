//! Fields as users give them: of 1 to 4 axes, and of integer types, on
//! the coder's 2-D and 3-D float fields.

use super::{CodecError, Elem};

/// The shape a field of `shape` is coded as: a 1-D signal as 1 x N, a
/// 4-D field with its first two axes as one (its bricks then span the
/// second axis's planes of one step of the first, each step coded as the
/// neighbour of the last).
pub fn coded_shape(shape: &[usize]) -> Result<Vec<usize>, CodecError> {
    match *shape {
        [n] => Ok(vec![1, n]),
        [_, _] | [_, _, _] => Ok(shape.to_vec()),
        [a, b, y, x] => a
            .checked_mul(b)
            .map(|ab| vec![ab, y, x])
            .ok_or_else(|| CodecError::Invalid(format!("shape {shape:?}: too many values"))),
        _ => Err(CodecError::Invalid(format!(
            "a field of shape {shape:?}: the codec takes arrays of 1 to 4 axes"
        ))),
    }
}

/// A decoded value of an integer field `elem` as that integer: rounded
/// to the nearest and clamped to the type's range (decoded values lie
/// within `Elem::integer_bound` of the input, so this one lies within the
/// bound asked for in integer units).
pub fn integer_value(v: f64, elem: Elem) -> f64 {
    let (lo, hi) = elem.limits();
    v.round().clamp(lo, hi)
}

/// Whether `v` holds a value of the integer type `elem` exactly.
pub fn is_integer_of(v: f64, elem: Elem) -> bool {
    let (lo, hi) = elem.limits();
    v.fract() == 0.0 && v >= lo && v <= hi
}
