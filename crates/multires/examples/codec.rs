//! Error-bounded compression of a 3-D field and back: every value within
//! the bound, and a region decoded from the bricks it meets.
//!
//!     cargo run --release -p multires --example codec
use multires::codec::{self, fields, CodecOptions, ErrorBound, Lifting, MrzReader, Values, Volume};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n = 96;
    let field = fields::make(fields::FieldKind::Turbulent, n, true, 1);
    let v = Volume::of(&[n, n, n], Values::F32(field))?;
    let opts = CodecOptions::new(Lifting::Interp, ErrorBound::Rel(1e-3));
    let (bytes, stats) = codec::compress(&v, &opts, &|_| {})?;
    println!(
        "{n}^3 float32: {} bytes, ratio {:.2}, max error {:.3e} (bound {:.3e})",
        bytes.len(),
        stats.ratio,
        stats.max_error,
        stats.abs_bound
    );
    let mut r = MrzReader::from_bytes(bytes, "example.mrz")?;
    let back = codec::decompress(&mut r, None, &|_| {})?;
    let (a, b) = (v.data.to_f64(), back.data.to_f64());
    let worst = a
        .iter()
        .zip(&b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    assert!(worst <= stats.abs_bound);
    println!("decoded: every value within the bound (largest error {worst:.3e})");
    let region = codec::parse_region("0:16,0:16,:", &back.shape()).map_err(|e| e.to_string())?;
    let part = codec::decompress(&mut r, Some(region), &|_| {})?;
    println!("region {:?} decoded from the bricks it meets", part.shape());
    Ok(())
}
