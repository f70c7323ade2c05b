//! One HDF5 chunk as one .mrz stream: the spec the `cd_values` carry, and
//! the chunk's bytes coded and decoded.

use multires::codec::{
    self, CodecOptions, DType, Elem, ErrorBound, FieldView, Lifting, MrzReader, Values, ValuesRef,
};

/// The `cd_values` layout this build writes and reads.
pub const LAYOUT: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum ChunkError {
    #[error("{0}")]
    Spec(String),
    #[error(transparent)]
    Codec(#[from] codec::CodecError),
}

/// What a dataset's filter values say: the bound, the transform, and
/// (once `set_local` ran) the element type and chunk shape.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkSpec {
    pub bound: ErrorBound,
    pub transform: Lifting,
    pub elem: Elem,
    pub chunk: Vec<usize>,
}

/// The filter's transform codes are the .mrz header's (4: the fast profile).
fn transform_of(c: u32) -> Option<Lifting> {
    Lifting::CODED.into_iter().find(|t| t.code() as u32 == c)
}

fn transform_code(t: Lifting) -> u32 {
    t.code() as u32
}

/// The user's part of the values (the first five): bound and transform.
pub fn user_values(bound: ErrorBound, transform: Lifting) -> [u32; 5] {
    let (kind, v) = match bound {
        ErrorBound::Abs(e) => (0, e),
        ErrorBound::Rel(e) => (1, e),
        ErrorBound::Psnr(d) => (2, d),
        ErrorBound::Lossless => (3, 0.0),
    };
    let b = v.to_bits();
    [
        LAYOUT,
        kind,
        b as u32,
        (b >> 32) as u32,
        transform_code(transform),
    ]
}

/// The bound and transform of the user's values (defaults when none).
pub fn parse_user(cd: &[u32]) -> Result<(ErrorBound, Lifting), ChunkError> {
    if cd.is_empty() {
        return Ok((ErrorBound::Rel(1e-3), Lifting::Interp));
    }
    if cd.len() < 5 || cd[0] != LAYOUT {
        return Err(ChunkError::Spec(format!(
            "filter values {cd:?}: expected layout {LAYOUT}, bound kind, bound (two words), transform \
             (multires.hdf5.filter() makes them)"
        )));
    }
    let v = f64::from_bits(cd[2] as u64 | (cd[3] as u64) << 32);
    let bound = match cd[1] {
        0 => ErrorBound::Abs(v),
        1 => ErrorBound::Rel(v),
        2 => ErrorBound::Psnr(v),
        3 => ErrorBound::Lossless,
        k => {
            return Err(ChunkError::Spec(format!(
                "bound kind {k}: give 0 abs, 1 rel, 2 psnr or 3 lossless"
            )))
        }
    };
    let lossy = !matches!(bound, ErrorBound::Lossless);
    if lossy && !(v.is_finite() && v >= 0.0) {
        return Err(ChunkError::Spec(format!(
            "bound {v}: must be finite and not negative"
        )));
    }
    let t = transform_of(cd[4])
        .ok_or_else(|| ChunkError::Spec(format!("transform {}: give 0 to 3", cd[4])))?;
    Ok((bound, t))
}

impl ChunkSpec {
    /// The full values (`set_local`'s).
    pub fn values(&self) -> Vec<u32> {
        let mut v = user_values(self.bound, self.transform).to_vec();
        v.push(self.elem.code() as u32);
        v.push(self.chunk.len() as u32);
        v.extend(self.chunk.iter().map(|&d| d as u32));
        v
    }

    /// The spec the full values say.
    pub fn parse(cd: &[u32]) -> Result<Self, ChunkError> {
        let (bound, transform) = parse_user(cd)?;
        let bad = || {
            ChunkError::Spec(format!(
                "filter values {cd:?}: no element type and chunk shape (set_local did not run)"
            ))
        };
        if cd.len() < 7 {
            return Err(bad());
        }
        let elem = Elem::from_code(cd[5] as u8).ok_or_else(bad)?;
        let nd = cd[6] as usize;
        let chunk: Vec<usize> = cd
            .get(7..7 + nd)
            .ok_or_else(bad)?
            .iter()
            .map(|&d| d as usize)
            .collect();
        if chunk.is_empty() || chunk.contains(&0) {
            return Err(bad());
        }
        Ok(ChunkSpec {
            bound,
            transform,
            elem,
            chunk,
        })
    }

    /// The chunk's shape folded into the codec's 1 to 4 axes (leading axes
    /// joined).
    fn axes(&self) -> Vec<usize> {
        let c = &self.chunk;
        if c.len() <= 4 {
            return c.clone();
        }
        let lead: usize = c[..c.len() - 2].iter().product();
        vec![lead, c[c.len() - 2], c[c.len() - 1]]
    }

    fn len(&self) -> usize {
        self.chunk.iter().product()
    }
}

/// A chunk's bytes (native little-endian values of the spec's type) as a
/// .mrz stream.
pub fn encode_chunk(spec: &ChunkSpec, bytes: &[u8]) -> Result<Vec<u8>, ChunkError> {
    let n = spec.len();
    let size = spec.elem.size();
    if bytes.len() != n * size {
        return Err(ChunkError::Spec(format!(
            "a chunk of {} bytes; {:?} values of {} make {}",
            bytes.len(),
            spec.chunk,
            spec.elem.name(),
            n * size
        )));
    }
    let axes = spec.axes();
    let coded = codec::coded_shape(&axes)?;
    let mut opts = CodecOptions::new(spec.transform, spec.bound);
    if coded != axes {
        opts.axes = Some(axes);
    }
    let words = |i: usize, w: usize| &bytes[i * w..(i + 1) * w];
    let values = match spec.elem {
        Elem::F32 => Values::F32(
            (0..n)
                .map(|i| f32::from_le_bytes(words(i, 4).try_into().unwrap_or_default()))
                .collect(),
        ),
        Elem::F64 => Values::F64(
            (0..n)
                .map(|i| f64::from_le_bytes(words(i, 8).try_into().unwrap_or_default()))
                .collect(),
        ),
        e => {
            opts.elem = Some(e);
            let v = |i: usize| -> f64 {
                match e {
                    Elem::U8 => bytes[i] as f64,
                    Elem::U16 => u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]) as f64,
                    Elem::I16 => i16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]) as f64,
                    _ => i32::from_le_bytes(words(i, 4).try_into().unwrap_or_default()) as f64,
                }
            };
            match e.coding() {
                DType::F32 => Values::F32((0..n).map(|i| v(i) as f32).collect()),
                DType::F64 => Values::F64((0..n).map(v).collect()),
            }
        }
    };
    let data = match &values {
        Values::F32(d) => ValuesRef::F32(d),
        Values::F64(d) => ValuesRef::F64(d),
    };
    let view = FieldView::of(&coded, data)?;
    let (b, _) = codec::compress_view(view, &opts, &|_| {})?;
    Ok(b)
}

/// A chunk's .mrz stream back as its bytes (values of the spec's type).
pub fn decode_chunk(spec: &ChunkSpec, stream: &[u8]) -> Result<Vec<u8>, ChunkError> {
    let mut r = MrzReader::from_bytes(stream.to_vec(), "<HDF5 chunk>")?;
    let h = r.header().clone();
    let n = spec.len();
    if h.dims.iter().product::<usize>() != n || h.elem != spec.elem {
        return Err(ChunkError::Spec(format!(
            "the stream holds {} {} values, the chunk {n} {}",
            h.dims.iter().product::<usize>(),
            h.elem.name(),
            spec.elem.name()
        )));
    }
    let v = codec::decompress(&mut r, None, &|_| {})?;
    let mut out = Vec::with_capacity(n * spec.elem.size());
    match (&v.data, spec.elem) {
        (Values::F32(d), Elem::F32) => d
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        (Values::F64(d), Elem::F64) => d
            .iter()
            .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        (d, e) => {
            for i in 0..d.len() {
                let x = codec::integer_value(d.get(i), e);
                match e {
                    Elem::U8 => out.push(x as u8),
                    Elem::U16 => out.extend_from_slice(&(x as u16).to_le_bytes()),
                    Elem::I16 => out.extend_from_slice(&(x as i16).to_le_bytes()),
                    Elem::I32 => out.extend_from_slice(&(x as i32).to_le_bytes()),
                    Elem::F32 => out.extend_from_slice(&(x as f32).to_le_bytes()),
                    Elem::F64 => out.extend_from_slice(&x.to_le_bytes()),
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_round_trip_through_their_spec() {
        let spec = ChunkSpec {
            bound: ErrorBound::Rel(1e-3),
            transform: Lifting::Interp,
            elem: Elem::F32,
            chunk: vec![4, 6, 8],
        };
        assert_eq!(ChunkSpec::parse(&spec.values()).unwrap(), spec);
        let x: Vec<f32> = (0..192).map(|i| (i as f32 * 0.1).sin()).collect();
        let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
        let back = decode_chunk(&spec, &encode_chunk(&spec, &bytes).unwrap()).unwrap();
        for (a, b) in bytes.chunks(4).zip(back.chunks(4)) {
            let (a, b) = (
                f32::from_le_bytes(a.try_into().unwrap()),
                f32::from_le_bytes(b.try_into().unwrap()),
            );
            assert!((a - b).abs() <= 2e-3 * 1.0001);
        }
        // Integers, lossless, in 5 axes and in 1.
        for chunk in [vec![2, 2, 3, 4, 5], vec![50]] {
            let spec = ChunkSpec {
                bound: ErrorBound::Lossless,
                transform: Lifting::Interp,
                elem: Elem::I16,
                chunk: chunk.clone(),
            };
            let n: usize = chunk.iter().product();
            let bytes: Vec<u8> = (0..n)
                .flat_map(|i| ((i as i16 * 37) - 900).to_le_bytes())
                .collect();
            assert_eq!(
                decode_chunk(&spec, &encode_chunk(&spec, &bytes).unwrap()).unwrap(),
                bytes
            );
        }
        assert!(parse_user(&[2, 0, 0, 0, 3]).is_err());
        assert!(encode_chunk(&spec, &[0; 7]).is_err());
    }
}
