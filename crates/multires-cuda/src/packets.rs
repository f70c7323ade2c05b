//! Wavelet packet levels of a signal on the GPU: each level's nodes are
//! the rows of one device buffer, and one batched single-level DWT of
//! those rows writes the next level (the DWT's layout: its details, then
//! its approximations) as the next buffer, so the tree never leaves the
//! device between levels; each level comes back once. Row b of level l
//! (of R = 2^(l-1) rows before it) is the child ('d' for b < R, else 'a')
//! of row b mod R: "block order", which the caller maps to paths.

use crate::dwt::{DwtLayout, DwtWork, GpuDwt};
use crate::error::{Context, CudaError};
use crate::GpuReal;
use multires::dwt::DwtError;

/// One level of the tree: its rows (block order) and their length.
pub struct PacketLevel<T> {
    pub values: Vec<T>,
    pub rows: usize,
    pub len: usize,
}

/// Levels 1 ..= `maxlevel` of the packet tree of `x`.
pub fn packet_levels<T: GpuReal>(
    plan: &GpuDwt<T>,
    x: &[T],
    maxlevel: usize,
) -> Result<Vec<PacketLevel<T>>, CudaError> {
    if x.is_empty() {
        return Err(DwtError::EmptySignal.into());
    }
    let gpu = plan.gpu();
    let mut cur = crate::cwt::upload(gpu, x)?;
    let (mut rows, mut len) = (1usize, x.len());
    let mut work = DwtWork::default();
    let mut out = Vec::with_capacity(maxlevel);
    for _ in 0..maxlevel {
        let layout = DwtLayout::wavedec(rows, len, plan.wavelet.filter_len(), plan.mode, 1);
        crate::cwt::check_free(gpu, (layout.total() * std::mem::size_of::<T>()) as u128)?;
        // SAFETY: wavedec_on_device writes every coefficient of the layout.
        let mut next = unsafe { gpu.stream.alloc::<T>(layout.total().max(1)) }
            .during(|| "allocating a packet level".into())?;
        plan.wavedec_on_device(&cur, &layout, &mut next, &mut work)?;
        let m = layout.total() / (2 * rows);
        let mut host = multires::memory::zeroed_vec::<T>(layout.total());
        crate::transfer::download_into(gpu, &gpu.stream, &next, 0, &mut host)?;
        gpu.synchronize()?;
        rows *= 2;
        len = m;
        out.push(PacketLevel {
            values: host,
            rows,
            len,
        });
        cur = next;
    }
    Ok(out)
}
