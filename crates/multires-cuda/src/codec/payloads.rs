//! Coded payloads: their checksums on the device, the page-locked
//! buffers they come down into, and the file's parts that hold them.

use super::*;

impl Slot {
    /// Each payload's CRC-32, taken on the device: on the host they were
    /// a batch's last stage (crc32fast at 11 GB/s a thread on the device's
    /// Xeon; a turbulent 1024^3 batch's 40 MB), and on two GPUs the last
    /// batches' took 2-4 ms of the run's tail on a busy rayon pool
    ///. The host's parts of each payload (step, stream
    /// header, outlier counts) go into `out` first (HPUT), so the bytes
    /// that come down are the file's. Payload b lies at `base[b]`, its
    /// `lens[b]` bytes (layout of `encode_rans`).
    pub(super) fn payload_checksums(
        &mut self,
        (base, stream_words, lens, heads): PayloadLayout<'_>,
        q: &[f64],
        counts_h: &[u64],
    ) -> Result<CudaSlice<u32>, CudaError> {
        let s = &self.stream.clone();
        let nbk = base.len();
        // Segments: the step and header words, then the outlier counts.
        let mut bytes: Vec<u8> = Vec::new();
        let (mut from, mut to, mut seg) = (Vec::new(), Vec::new(), Vec::new());
        let mut pfirst = vec![0u32];
        for bi in 0..nbk {
            let (no, nr) = (counts_h[2 * bi], counts_h[2 * bi + 1]);
            let words = stream_words[bi];
            from.push(bytes.len() as u64);
            to.push(base[bi] as u64);
            bytes.extend(q[bi].to_le_bytes());
            heads[bi].iter().for_each(|w| bytes.extend(w.to_le_bytes()));
            seg.push(8 + 4 * heads[bi].len() as u32);
            from.push(bytes.len() as u64);
            to.push((base[bi] + 8 + 4 * words) as u64);
            bytes.extend((no as u32).to_le_bytes());
            bytes.extend((nr as u32).to_le_bytes());
            seg.push(8);
            let len = lens[bi];
            let last = pfirst[pfirst.len() - 1];
            pfirst.push(last + len.div_ceil(CRC_PIECE) as u32);
        }
        // CRC_PIECES reads whole aligned words (payloads of float32 or
        // float64 values, stream words and u32 counts).
        if lens.iter().any(|v| v % 4 != 0) || base.iter().any(|v| v % 4 != 0) {
            return Err(CudaError::Unsupported(
                "a payload not of whole 4-byte words".into(),
            ));
        }
        let pieces = pfirst[nbk] as usize;
        let mut longs = from;
        longs.extend(to);
        longs.extend(base.iter().map(|&b| b as u64));
        longs.extend(lens.iter().map(|&l| l as u64));
        let mut ints = seg;
        ints.extend(&pfirst);
        let g = &self.gpu;
        prof(s, "c_lists")?;
        let bytes_d = self.stage.up(g, s, &bytes)?;
        let longs_d = self.stage.up(g, s, &longs)?;
        let ints_d = self.stage.up(g, s, &ints)?;
        let nseg = 2 * nbk;
        let (from_d, to_d) = (longs_d.slice(0..nseg), longs_d.slice(nseg..2 * nseg));
        let at_d = longs_d.slice(2 * nseg..2 * nseg + nbk);
        let len_d = longs_d.slice(2 * nseg + nbk..2 * nseg + 2 * nbk);
        let (seg_d, pfirst_d) = (ints_d.slice(0..nseg), ints_d.slice(nseg..nseg + nbk + 1));
        let nseg64 = nseg as i64;
        let f = self.f("HPUT(kernel)", 0)?;
        let mut l = s.launch_builder(&f);
        l.arg(&bytes_d)
            .arg(&from_d)
            .arg(&to_d)
            .arg(&seg_d)
            .arg(&nseg64)
            .arg(&mut self.out);
        unsafe { l.launch(cfg((nseg.clamp(1, 65535) as u32, 1), 128, 0)) }
            .during(|| "launching HPUT".into())?;
        prof(s, "c_hput")?;
        let crc = payload_crcs(g, s, &self.out, &at_d, &len_d, &pfirst_d, pieces)?;
        prof(s, "c_crc")?;
        Ok(crc)
    }
}

/// The CRC-32 of each payload of `out` (at `at_d`, `len_d` bytes of whole
/// words), whose pieces of CRC_PIECE bytes are numbered from `pfirst_d`
/// (`pieces` in all): CRC_PIECES checks every piece on its own thread,
/// CRC_FOLD joins a payload's, a warp a payload.
pub(super) fn payload_crcs(
    gpu: &Gpu,
    s: &Arc<CudaStream>,
    out: &CudaSlice<u8>,
    at_d: &CudaView<'_, u64>,
    len_d: &CudaView<'_, u64>,
    pfirst_d: &CudaView<'_, u32>,
    pieces: usize,
) -> Result<CudaSlice<u32>, CudaError> {
    let nbk = at_d.len();
    let nbk64 = nbk as i64;
    let mut crcp = s
        .alloc_zeros::<u32>(pieces.max(1))
        .during(|| "alloc".into())?;
    let f = gpu.function(Kernel::Codec, "CRC_PIECES(kernel)", 0)?;
    let mut l = s.launch_builder(&f);
    l.arg(out)
        .arg(at_d)
        .arg(len_d)
        .arg(pfirst_d)
        .arg(&nbk64)
        .arg(&mut crcp);
    unsafe { l.launch(cfg((pieces.div_ceil(256).max(1) as u32, 1), 256, 0)) }
        .during(|| "launching CRC_PIECES".into())?;
    let mut crc = s.alloc_zeros::<u32>(nbk.max(1)).during(|| "alloc".into())?;
    let f = gpu.function(Kernel::Codec, "CRC_FOLD(kernel)", 0)?;
    let xp = CRC_PIECE_SHIFT;
    let mut l = s.launch_builder(&f);
    l.arg(&crcp)
        .arg(pfirst_d)
        .arg(&nbk64)
        .arg(&xp)
        .arg(&mut crc);
    unsafe { l.launch(cfg((nbk.div_ceil(8).max(1) as u32, 1), 256, 0)) }
        .during(|| "launching CRC_FOLD".into())?;
    Ok(crc)
}

/// A batch's payloads as `encode_rans` lays them out, per brick: where
/// each begins in the batch's bytes, its stream's words, its bytes, and
/// its stream's header words.
pub(super) type PayloadLayout<'a> = (&'a [usize], &'a [usize], &'a [usize], &'a [Vec<u32>]);

/// Bytes of an interpolation payload: step, stream of `words`, outlier
/// counts, and `no` outliers of which `nr` exact values of `sz` bytes.
pub(super) fn payload_len(words: usize, no: usize, nr: usize, sz: usize) -> usize {
    8 + 4 * words + 8 + 8 * no + sz * nr
}

/// Bytes a thread of CRC_PIECES checks at most (the kernel's CRC_PIECE):
/// small, as a lane's steps are in series and set the kernel's time.
pub(super) const CRC_PIECE: usize = 512;

/// x^(8 CRC_PIECE): appending a whole piece to a CRC (CRC_FOLD's `xp`).
pub(super) const CRC_PIECE_SHIFT: u32 = crc_x8n(CRC_PIECE as u64);

/// a(x) b(x) modulo the CRC-32 polynomial, bit-reflected (zlib's
/// multmodp; the kernels' crc_multmodp).
pub(super) const fn crc_multmodp(a: u32, mut b: u32) -> u32 {
    let (mut p, mut i) = (0u32, 32);
    while i > 0 {
        i -= 1;
        if (a >> i) & 1 == 1 {
            p ^= b;
        }
        b = (b >> 1) ^ (0xedb8_8320 & 0u32.wrapping_sub(b & 1));
    }
    p
}

/// x^(8 n) modulo the polynomial: appending n bytes to a CRC-32's message
/// multiplies its CRC by it (zlib's x2nmodp(n, 3); crc32_combine).
pub(super) const fn crc_x8n(mut n: u64) -> u32 {
    let (mut p, mut x2k) = (1u32 << 31, 1u32 << 30);
    let mut k = 0;
    while k < 3 {
        x2k = crc_multmodp(x2k, x2k);
        k += 1;
    }
    while n != 0 {
        if n & 1 == 1 {
            p = crc_multmodp(x2k, p);
        }
        n >>= 1;
        x2k = crc_multmodp(x2k, x2k);
    }
    p
}

/// A .mrz file coded on GPUs, as its parts: each payload a range of the
/// bytes its batch brought down (`MrzParts::write_to` writes the file).
pub type GpuMrz = codec::MrzParts<BatchBytes>;

/// A brick's payload: its range of its batch's bytes, and its CRC-32.
#[derive(Clone)]
pub struct BatchBytes {
    pub(super) buf: Arc<BatchBuf>,
    pub(super) at: std::ops::Range<usize>,
    pub(super) crc: u32,
}

impl BatchBytes {
    pub(super) fn own(p: Vec<u8>) -> Self {
        let at = 0..p.len();
        BatchBytes {
            crc: multires::codec::container::crc32(&p),
            buf: Arc::new(BatchBuf::Owned(p)),
            at,
        }
    }
}

impl AsRef<[u8]> for BatchBytes {
    fn as_ref(&self) -> &[u8] {
        &self.buf[self.at.clone()]
    }
}

/// A batch's bytes: its own vector, or the page-locked buffer its payloads
/// were copied down into, which goes back to `PAYLOAD_POOL` when the
/// file's last payload of it is dropped.
pub(super) enum BatchBuf {
    Owned(Vec<u8>),
    Pinned(Option<Registered<u8>>),
}

impl std::ops::Deref for BatchBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            BatchBuf::Owned(v) => v,
            BatchBuf::Pinned(Some(p)) => p,
            BatchBuf::Pinned(None) => &[],
        }
    }
}

impl Drop for BatchBuf {
    fn drop(&mut self) {
        if let BatchBuf::Pinned(p) = self {
            if let Some(p) = p.take() {
                return_payload_buffer(p);
            }
        }
    }
}

/// Page-locked buffers of coded batches whose files were dropped, for the
/// next compression's batches: a batch copied down into one is its file's
/// bytes, with no copy out of pinned memory (1 GB, about 45 ms on 16 cores
/// at 1e-4 on a turbulent 1024^3 field) and no page-locking after the first
/// file of a size.
pub(super) static PAYLOAD_POOL: Mutex<Vec<Registered<u8>>> = Mutex::new(Vec::new());

/// The idle payload buffers kept at most, in bytes; more are freed.
pub(super) const PAYLOAD_POOL_BYTES: usize = 4 << 30;

/// A page-locked buffer of at least `len` bytes on `gpu`'s context: the
/// smallest idle one that holds it, or a new one rounded up to an eighth
/// of its power of two (so batches of about one size share buffers).
pub(super) fn take_payload_buffer(gpu: &Gpu, len: usize) -> Result<Registered<u8>, CudaError> {
    if let Ok(mut pool) = PAYLOAD_POOL.lock() {
        let best = (0..pool.len())
            .filter(|&i| Arc::ptr_eq(pool[i].context(), &gpu.ctx) && pool[i].len() >= len)
            .min_by_key(|&i| pool[i].len());
        if let Some(i) = best {
            return Ok(pool.swap_remove(i));
        }
    }
    let len = len.max(PINNED_MIN_BYTES);
    let step = (len.next_power_of_two() / 8).max(1);
    Registered::zeroed(&gpu.ctx, len.next_multiple_of(step), 0)
}

pub(super) fn return_payload_buffer(p: Registered<u8>) {
    if let Ok(mut pool) = PAYLOAD_POOL.lock() {
        let held: usize = pool.iter().map(|b| b.len()).sum();
        if held + p.len() <= PAYLOAD_POOL_BYTES {
            pool.push(p);
        }
    }
}

/// A .mrz file's bytes in page-locked memory (registered for every
/// context): the GPU decoder copies the payloads up from where they lie,
/// where it otherwise gathers them into a slot's pinned buffer first (at
/// 1e-4 on a turbulent 1024^3 field, 1 GB of gathers that the decoding
/// kernels waited for). `MrzReader::from_shared` reads it.
pub struct PinnedBytes {
    pub(super) buf: Registered<u8>,
    pub(super) len: usize,
}

impl PinnedBytes {
    /// A page-locked copy of `bytes`.
    pub fn copy_of(gpu: &Gpu, bytes: &[u8]) -> Result<Self, CudaError> {
        use rayon::prelude::*;
        let mut p = Self::zeroed(gpu, bytes.len())?;
        p.buf[..bytes.len()]
            .par_chunks_mut(1 << 20)
            .zip(bytes.par_chunks(1 << 20))
            .for_each(|(d, s)| d.copy_from_slice(s));
        Ok(p)
    }

    /// The file at `path`, read into page-locked memory.
    pub fn read(gpu: &Gpu, path: &std::path::Path) -> Result<Self, CudaError> {
        use std::io::Read;
        let io = |e: std::io::Error| {
            CudaError::Unsupported(format!("cannot read {}: {e}", path.display()))
        };
        let mut f = std::fs::File::open(path).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        let len = usize::try_from(len)
            .map_err(|_| CudaError::Unsupported(format!("{}: too large", path.display())))?;
        let mut p = Self::zeroed(gpu, len)?;
        f.read_exact(&mut p.buf[..len]).map_err(io)?;
        Ok(p)
    }

    pub(super) fn zeroed(gpu: &Gpu, len: usize) -> Result<Self, CudaError> {
        const PORTABLE: u32 = 1;
        let buf = Registered::zeroed(&gpu.ctx, len, PORTABLE)?;
        let start = buf.as_ptr() as usize;
        if let Ok(mut r) = PAGE_LOCKED.lock() {
            r.push(start..start + buf.len());
        }
        Ok(PinnedBytes { buf, len })
    }

    /// As the reader's shared bytes.
    pub fn shared(self) -> codec::SharedBytes {
        Arc::new(self)
    }
}

impl AsRef<[u8]> for PinnedBytes {
    fn as_ref(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl Drop for PinnedBytes {
    fn drop(&mut self) {
        let start = self.buf.as_ptr() as usize;
        if let Ok(mut r) = PAGE_LOCKED.lock() {
            r.retain(|x| x.start != start);
        }
    }
}

/// The address ranges of the live `PinnedBytes`.
pub(super) static PAGE_LOCKED: Mutex<Vec<std::ops::Range<usize>>> = Mutex::new(Vec::new());

pub(super) static DIRECT_BATCHES: AtomicUsize = AtomicUsize::new(0);

/// The batches whose streams went up from a `PinnedBytes` without a
/// gather, since the process started (tests check the path is taken).
pub fn direct_batches() -> usize {
    DIRECT_BATCHES.load(Ordering::Relaxed)
}

/// Whether `p` lies in a live `PinnedBytes` (a copy up from it may then be
/// queued without a pinned buffer between).
pub(super) fn page_locked(p: &[u8]) -> Option<std::ops::Range<usize>> {
    let (a, z) = (p.as_ptr() as usize, p.as_ptr() as usize + p.len());
    PAGE_LOCKED
        .lock()
        .ok()?
        .iter()
        .find(|x| x.start <= a && z <= x.end)
        .cloned()
}

/// A brick coded on the GPU: payload, largest error, squared error sum,
/// outliers (`multires::codec::CodedBrick` with a shared payload).
pub(super) type GpuCoded = (BatchBytes, f64, f64, usize);
