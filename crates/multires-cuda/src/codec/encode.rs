//! A slot's coding of one batch: upload, transform, quantization and the
//! bound's check, then the rANS or Rice coder.

use super::*;

impl Slot {
    pub(super) fn new(
        gpu: Arc<Gpu>,
        cap: usize,
        dtype: DType,
        usage: Use,
    ) -> Result<Self, CudaError> {
        let (stream, bulk) = slot_streams(&gpu)?;
        let nb = cap.div_ceil(32) + 64;
        macro_rules! dev {
            ($t:ty, $n:expr) => {
                stream
                    .alloc_zeros::<$t>(($n).max(1))
                    .during(|| format!("allocating {} values for a batch of bricks", $n))?
            };
        }
        let (in32, in64) = match dtype {
            DType::F32 => (Some(dev!(f32, cap)), None),
            DType::F64 => (None, Some(dev!(f64, cap))),
        };
        let lifting = usage.doubles();
        let (ints, corr) = usage.ints_corr();
        Ok(Slot {
            x: dev!(f64, if lifting { cap } else { 0 }),
            c: dev!(f64, if lifting { cap } else { 0 }),
            y: dev!(f64, cap),
            ints: dev!(i32, ints * cap),
            corr: dev!(i32, corr * cap),
            nzf: dev!(u8, nb),
            mode: dev!(u32, nb),
            sizes: dev!(u32, 4 * nb),
            cnt: dev!(u32, 2 * nb),
            out: dev!(u8, 1 << 20),
            pbytes: None,
            up_streams: None,
            stage: Stage::default(),
            gathered_peak: None,
            field_in: None,
            orders: BTreeMap::new(),
            classes: BTreeMap::new(),
            dec_lists: DecodeLists::default(),
            enc_lists: EncodeLists::default(),
            pin32: None,
            pin64: None,
            in32,
            in64,
            gpu,
            stream,
            bulk,
            cap,
            dtype,
            usage,
        })
    }

    /// The pinned buffer of `cap` values (as stored), allocated on first
    /// use: a field on the device never needs it.
    pub(super) fn pin_values(&mut self) -> Result<(), CudaError> {
        let cap = self.cap;
        // The pinned values are written before each copy up and not
        // touched again until the stream is synchronized; cached memory
        // (not write-combined): the decoders read decoded bricks out of it.
        match self.dtype {
            DType::F32 if self.pin32.is_none() => {
                self.pin32 = Some(Registered::zeroed(&self.gpu.ctx, cap, 0)?)
            }
            DType::F64 if self.pin64.is_none() => {
                self.pin64 = Some(Registered::zeroed(&self.gpu.ctx, cap, 0)?)
            }
            _ => {}
        }
        Ok(())
    }

    pub(super) fn f(&self, inst: &str, smem: usize) -> Result<CudaFunction, CudaError> {
        self.gpu.function(Kernel::Codec, inst, smem)
    }

    /// Gathers the batch's bricks into the pinned buffer (as stored) and
    /// copies them up; for the lifting transforms (`t`), into `x` as
    /// doubles (the interpolation reads them as stored).
    pub(super) fn upload(
        &mut self,
        v: &Volume,
        grid: &codec::BrickGrid,
        b: &Batch,
        t: lifting::Lifting,
    ) -> Result<(), CudaError> {
        use rayon::prelude::*;
        self.pin_values()?;
        let n: usize = b.dims.iter().product();
        let total = n * b.bricks.len();
        // The lifting transforms' conversion kernel (none for the
        // interpolation).
        let to_f64 = if t == lifting::Lifting::Interp {
            None
        } else {
            Some(self.f(&format!("TO_F64(kernel, {})", cuda_type(v.dtype())), 0)?)
        };
        // The field is held in its stored type, so a brick's rows are plain
        // copies into pinned memory.
        macro_rules! fill {
            ($data:expr, $pin:expr, $dev:expr) => {{
                let pin = $pin
                    .as_mut()
                    .ok_or_else(|| CudaError::Unsupported("no staging".into()))?;
                let host = &mut pin[..];
                let dev = $dev
                    .as_mut()
                    .ok_or_else(|| CudaError::Unsupported("no input".into()))?;
                // A piece of bricks (one a core) goes up while the next is
                // gathered; the pieces' pinned memory is not written again
                // before the stream is synchronized.
                let piece = rayon::current_num_threads().max(1);
                for (j, bricks) in b.bricks.chunks(piece).enumerate() {
                    let at = j * piece * n;
                    let part = &mut host[at..at + bricks.len() * n];
                    part.par_chunks_mut(n)
                        .zip(bricks.par_iter())
                        .for_each(|(dst, &k)| {
                            let (s, e) = grid.bounds(k);
                            for (d, row) in dst
                                .chunks_exact_mut(e[2])
                                .zip(codec::brick_rows($data, v.dims, s, e))
                            {
                                d.copy_from_slice(row);
                            }
                        });
                    self.stream
                        .memcpy_htod(&*part, &mut dev.slice_mut(at..at + part.len()))
                        .during(|| "copying bricks to the GPU".into())?;
                }
                if let Some(f) = &to_f64 {
                    let count = total as i64;
                    let mut l = self.stream.launch_builder(f);
                    l.arg(&*dev).arg(&mut self.x).arg(&count);
                    unsafe { l.launch(cfg(((total.div_ceil(256)).min(65535) as u32, 1), 256, 0)) }
                        .during(|| "launching TO_F64".into())?;
                }
            }};
        }
        match &v.data {
            Values::F32(d) => fill!(d, self.pin32, self.in32),
            Values::F64(d) => fill!(d, self.pin64, self.in64),
        }
        Ok(())
    }

    /// The coding order of `dims` under `t` (`io`: the interpolation's)
    /// and its inverse, uploaded once a device (`Gpu::table`).
    pub(super) fn order(
        &mut self,
        dims: [usize; 3],
        t: lifting::Lifting,
        io: interp::Order,
    ) -> Result<(), CudaError> {
        let key = order_key(dims, t, io);
        if !self.orders.contains_key(&key) {
            let s = &self.stream;
            let o = self.gpu.table(&format!("codec order {key:?}"), || {
                let o = match key.1 {
                    Some(io) => interp::order(dims, io),
                    None => morton::order(dims),
                };
                let mut inv = vec![0u32; o.len()];
                for (j, &k) in o.iter().enumerate() {
                    inv[k as usize] = j as u32;
                }
                let up = || "copying a coding order".to_string();
                let order = s.clone_htod(o.as_slice()).during(up)?;
                let inverse = s.clone_htod(&inv).during(up)?;
                s.synchronize().during(up)?;
                Ok(CodingOrder { order, inverse })
            })?;
            self.orders.insert(key, o);
        }
        Ok(())
    }

    /// The rANS level classes of `dims` in order `o` (a byte each: they
    /// are 0 to 7), uploaded once a device (`Gpu::table`).
    pub(super) fn classes(&mut self, dims: [usize; 3], o: interp::Order) -> Result<(), CudaError> {
        if !self.classes.contains_key(&(dims, o)) {
            let s = &self.stream;
            let d = self
                .gpu
                .table(&format!("codec classes {dims:?} {o:?}"), || {
                    let up = || "copying level classes".to_string();
                    let cl = interp::classes(dims, o);
                    let d = LevelClasses {
                        values: s.clone_htod(cl.as_slice()).during(up)?,
                        tiles: s.clone_htod(&tile_classes(&cl)).during(up)?,
                        blocks: rans::class_blocks(&cl),
                    };
                    s.synchronize().during(up)?;
                    Ok(d)
                })?;
            self.classes.insert((dims, o), d);
        }
        Ok(())
    }

    /// Codes the uploaded batch; payloads in the batch's brick order.
    pub(super) fn encode(
        &mut self,
        b: &Batch,
        dtype: DType,
        t: lifting::Lifting,
        (e, chunk_log): (f64, u32),
        front: Option<Permit<'_>>,
    ) -> Result<Vec<GpuCoded>, CudaError> {
        let dims = b.dims;
        let n: usize = dims.iter().product();
        let nbk = b.bricks.len();
        let nb = n.div_ceil(32);
        let f32i: i32 = (dtype == DType::F32) as i32;
        let sz = dtype.size();
        let closed = t == lifting::Lifting::Interp;
        if order_table_read(t, interp::Order::CURRENT) {
            self.order(dims, t, interp::Order::CURRENT)?;
        }
        let s = &self.stream.clone();
        prof(s, "before")?;
        let mut counts = s
            .alloc_zeros::<u64>(2 * nbk * TRIALS)
            .during(|| "alloc".into())?;
        let mut maxe = s
            .alloc_zeros::<u64>(nbk * TRIALS)
            .during(|| "alloc".into())?;
        let mut sse = s
            .alloc_zeros::<f64>(nbk * TRIALS)
            .during(|| "alloc".into())?;
        // The interpolation codes once, at each brick's step: its details
        // as integers in coding order, the reconstruction into y, each
        // value checked against the bound as it is reconstructed; then its
        // rANS payloads. The lifting transforms lift x into c and try each
        // step below. Each brick's peak: the interpolation's step (its
        // margin for rounding) and a zero bound's step depend on it.
        let field_in = self.field_in.take();
        let (stored, in_place) = match (closed, &field_in) {
            (false, _) => (None, None),
            (true, Some(fi)) => {
                use cudarc::driver::DevicePtr;
                let exact = self.in32.as_ref().ok_or_else(|| {
                    CudaError::Unsupported("a float32 field needs a float32 slot".into())
                })?;
                let (exact, _sync) = exact.device_ptr(s);
                (
                    Some(Input::Field(&fi.at)),
                    Some((&fi.org, fi.rows, fi.cols, exact)),
                )
            }
            (true, None) => (Some(Input::stored(dtype, &self.in32, &self.in64)?), None),
        };
        let gathered = self.gathered_peak.take();
        let pk = if e > 0.0 && !closed {
            None
        } else if let Some(pk) = gathered {
            Some(pk)
        } else {
            let mut pk = s.alloc_zeros::<u64>(nbk).during(|| "alloc".into())?;
            let input = stored.unwrap_or(Input::F64(&self.x));
            let f = self.f(input.peak_kernel(), 0)?;
            let n64 = n as i64;
            let mut l = s.launch_builder(&f);
            match input {
                Input::F64(v) => l.arg(v),
                Input::F32(v) => l.arg(v),
                Input::Field(_) => {
                    return Err(CudaError::Unsupported(
                        "a field read in place without its peaks".into(),
                    ))
                }
            };
            l.arg(&n64).arg(&mut pk);
            // At most 64 blocks a brick, each looping: few atomics.
            let gx = n.div_ceil(256 * 32).clamp(1, 64) as u32;
            unsafe { l.launch(cfg((gx, nbk as u32), 256, 0)) }
                .during(|| "launching BPEAK".into())?;
            Some(pk)
        };
        if let (Some(input), Some(pk)) = (stored, &pk) {
            // The steps on the device (read back with the sizes below).
            let mut qd = s.alloc_zeros::<f64>(nbk).during(|| "alloc".into())?;
            let (ulp, zero_step) = codec::interp_step_factors(dtype);
            let f = self.f("ISTEP(kernel)", 0)?;
            let nbk64 = nbk as i64;
            let mut l = s.launch_builder(&f);
            l.arg(pk).arg(&e).arg(&ulp).arg(&zero_step);
            l.arg(&nbk64).arg(&mut qd);
            unsafe { l.launch(cfg((nbk.div_ceil(256) as u32, 1), 256, 0)) }
                .during(|| "launching ISTEP".into())?;
            let o = interp::Order::CURRENT;
            let inverse = if order_table_read(t, o) {
                Some(&coding_order(&self.orders, dims, t, o)?.inverse)
            } else {
                None
            };
            let mut omask = s
                .alloc_zeros::<u32>(nbk * n.div_ceil(32))
                .during(|| "alloc".into())?;
            let check = InterpCheck {
                ints: &mut self.ints,
                inverse,
                corr: &mut self.corr,
                omask: &mut omask,
                e,
                f32: f32i,
                counts: &mut counts,
                maxe: &mut maxe,
                sse: &mut sse,
                field: in_place,
            };
            interp_passes(
                &self.gpu,
                s,
                input,
                &mut self.c,
                &mut self.y,
                &qd,
                dims,
                nbk,
                InterpPass::Forward(check),
            )?;
            prof(s, "interp")?;
            let (hist, cls) = self.rans_histograms(dims, nbk)?;
            // One wait for the lists (the histograms' only where the host
            // plans).
            let g = &self.gpu.clone();
            let counts_q = self.stage.queue_down(g, s, &counts)?;
            let maxe_q = self.stage.queue_down(g, s, &maxe)?;
            let sse_q = self.stage.queue_down(g, s, &sse)?;
            let iq_q = self.stage.queue_down(g, s, &qd)?;
            let planned = {
                let hist_q = self.stage.queue_down(g, s, &hist)?;
                self.stage.wait(s)?;
                self.stage.read(&hist_q)
            };
            let (counts_h, maxe_h) = (self.stage.read(&counts_q), self.stage.read(&maxe_q));
            let (sse_h, iq) = (self.stage.read(&sse_q), self.stage.read(&iq_q));
            // Every copy through the stage so far has been read.
            self.stage.synchronized();
            prof(s, "r_hist")?;
            // The transform is done (the reads waited for it).
            drop(front);
            return self.encode_rans(
                b,
                &iq,
                (&counts_h, &maxe_h, &sse_h),
                (planned, &cls),
                &omask,
                (f32i, sz, chunk_log),
            );
        }
        s.memcpy_dtod(&self.x.slice(0..nbk * n), &mut self.c.slice_mut(0..nbk * n))
            .during(|| "copying bricks".into())?;
        lift(&self.gpu, s, &mut self.c, dims, nbk, t, false)?;
        prof(s, "fwd_lift")?;
        // Per brick and trial: the steps (from each brick's peak on a zero bound).
        let peaks: Vec<f64> = match &pk {
            Some(pk) => self
                .stage
                .down(&self.gpu, s, pk)?
                .into_iter()
                .map(f64::from_bits)
                .collect(),
            None => vec![0.0; nbk],
        };
        let steps: Vec<[f64; 3]> = peaks.iter().map(|&p| codec::steps(e, p)).collect();
        let CodingOrder { order, inverse } =
            coding_order(&self.orders, dims, t, interp::Order::CURRENT)?;
        let (fq, fc, fs, fm) = (
            self.f("QUANT(kernel)", 0)?,
            self.f("CHECK(kernel)", 0)?,
            self.f("BSTATS(kernel)", 0)?,
            self.f("MAP(kernel)", 0)?,
        );
        let levels = rice::map_levels(nb);
        let map_smem = levels.iter().sum::<usize>() * 4;
        let nlev = levels.len() as i32;
        let (n64, nb64) = (n as i64, nb as i64);
        let mut sums = s
            .alloc_zeros::<u64>(4 * nbk * TRIALS)
            .during(|| "alloc".into())?;
        let mut mapw = s
            .alloc_zeros::<u32>(nbk * TRIALS)
            .during(|| "alloc".into())?;
        let null = 0u64;
        for tr in 0..TRIALS {
            let q: Vec<f64> = steps.iter().map(|s| s[tr]).collect();
            let qd = self.stage.up(&self.gpu, s, &q)?;
            let mut ints = self.ints.slice_mut(tr * nbk * n..(tr + 1) * nbk * n);
            let mut l = s.launch_builder(&fq);
            l.arg(&self.c).arg(order).arg(&qd).arg(&mut ints).arg(&n64);
            unsafe { l.launch(cfg(block_grid(n, nbk), 256, 0)) }
                .during(|| "launching QUANT".into())?;
            let ints = ints.as_view();
            dequantize_and_lift(&self.gpu, s, &ints, inverse, &qd, &mut self.y, dims, nbk, t)?;
            prof(s, "inv_lift")?;
            let mut corr = self.corr.slice_mut(tr * nbk * n..(tr + 1) * nbk * n);
            let mut cn = counts.slice_mut(tr * 2 * nbk..(tr + 1) * 2 * nbk);
            let mut mx = maxe.slice_mut(tr * nbk..(tr + 1) * nbk);
            let mut se = sse.slice_mut(tr * nbk..(tr + 1) * nbk);
            let mut l = s.launch_builder(&fc);
            l.arg(&self.x)
                .arg(&self.y)
                .arg(&mut corr)
                .arg(&n64)
                .arg(&e)
                .arg(&f32i)
                .arg(&mut cn)
                .arg(&mut mx)
                .arg(&mut se);
            // 16 values a thread: a warp's four atomics per brick were
            // the kernel's cost at one value a thread.
            unsafe { l.launch(cfg(block_grid(n.div_ceil(16), nbk), 256, 0)) }
                .during(|| "launching CHECK".into())?;
            prof(s, "check")?;
            let ints = self.ints.slice(tr * nbk * n..(tr + 1) * nbk * n);
            let mut su = sums.slice_mut(tr * 4 * nbk..(tr + 1) * 4 * nbk);
            let zero = 0i64;
            let mut l = s.launch_builder(&fs);
            l.arg(&ints)
                .arg(&null)
                .arg(&zero)
                .arg(&n64)
                .arg(&nb64)
                .arg(&mut self.nzf)
                .arg(&null)
                .arg(&null)
                .arg(&mut su);
            unsafe { l.launch(cfg(block_grid(nb * 32, nbk), 256, 0)) }
                .during(|| "launching BSTATS".into())?;
            prof(s, "bstats_size")?;
            let mut mw = mapw.slice_mut(tr * nbk..(tr + 1) * nbk);
            let mut l = s.launch_builder(&fm);
            l.arg(&self.nzf)
                .arg(&nb64)
                .arg(&nlev)
                .arg(&mut mw)
                .arg(&null)
                .arg(&null);
            unsafe { l.launch(cfg((nbk as u32, 1), 256, map_smem as u32)) }
                .during(|| "launching MAP".into())?;
            prof(s, "map_size")?;
        }
        let g = &self.gpu;
        let counts_q = self.stage.queue_down(g, s, &counts)?;
        let sums_q = self.stage.queue_down(g, s, &sums)?;
        let mapw_q = self.stage.queue_down(g, s, &mapw)?;
        let maxe_q = self.stage.queue_down(g, s, &maxe)?;
        let sse_q = self.stage.queue_down(g, s, &sse)?;
        self.stage.wait(s)?;
        let (counts_h, sums_h) = (self.stage.read(&counts_q), self.stage.read(&sums_q));
        let (mapw_h, maxe_h) = (self.stage.read(&mapw_q), self.stage.read(&maxe_q));
        let sse_h = self.stage.read(&sse_q);
        // Sizes per brick and trial; the smallest wins, the first on ties.
        let size_of = |bi: usize, tr: usize| -> (usize, [usize; 4], usize, usize, usize) {
            let su = &sums_h[(tr * nbk + bi) * 4..(tr * nbk + bi) * 4 + 4];
            let words = [0, 1, 2, 3].map(|i| (su[i] as usize).div_ceil(32));
            let mw = mapw_h[tr * nbk + bi] as usize;
            let (no, nr) = (
                counts_h[(tr * nbk + bi) * 2] as usize,
                counts_h[(tr * nbk + bi) * 2 + 1] as usize,
            );
            let stream = rice::StreamHeader::WORDS + mw + words.iter().sum::<usize>();
            let total = 8 + 4 * stream + 8 + 8 * no + sz * nr;
            (total, words, mw, no, nr)
        };
        let trial: Vec<i32> = (0..nbk)
            .map(|bi| {
                let mut best = 0;
                for tr in 1..TRIALS {
                    if size_of(bi, tr).0 < size_of(bi, best).0 {
                        best = tr;
                    }
                }
                best as i32
            })
            .collect();
        // Layout of each payload.
        let mut base = Vec::with_capacity(nbk);
        let mut total = 0usize;
        for (bi, &tr) in trial.iter().enumerate() {
            base.push(total);
            total += size_of(bi, tr as usize).0;
        }
        let mut sec = Vec::with_capacity(4 * nbk);
        let mut osec = Vec::with_capacity(3 * nbk);
        let mut mofs = Vec::with_capacity(nbk);
        for (bi, &tr) in trial.iter().enumerate() {
            let (_, words, mw, no, _) = size_of(bi, tr as usize);
            let m = base[bi] + 8 + 4 * rice::StreamHeader::WORDS;
            mofs.push(m as u64);
            let mut p = m + 4 * mw;
            for w in words {
                sec.push(p as u64);
                p += 4 * w;
            }
            p += 8;
            osec.push(p as u64);
            osec.push((p + 4 * no) as u64);
            osec.push((p + 8 * no) as u64);
        }
        clear_out(s, &mut self.out, total)?;
        let trial_d = self.stage.up(&self.gpu, s, &trial)?;
        let sec_d = self.stage.up(&self.gpu, s, &sec)?;
        let osec_d = self.stage.up(&self.gpu, s, &osec)?;
        let mofs_d = self.stage.up(&self.gpu, s, &mofs)?;
        let tstride = (nbk * n) as i64;
        // Block modes and sizes of the chosen trials, scanned into offsets.
        let mut l = s.launch_builder(&fs);
        l.arg(&self.ints)
            .arg(&trial_d)
            .arg(&tstride)
            .arg(&n64)
            .arg(&nb64)
            .arg(&mut self.nzf)
            .arg(&mut self.mode)
            .arg(&mut self.sizes)
            .arg(&null);
        unsafe { l.launch(cfg(block_grid(nb * 32, nbk), 256, 0)) }
            .during(|| "launching BSTATS".into())?;
        prof(s, "bstats_write")?;
        let mut tot = s.alloc_zeros::<u64>(6 * nbk).during(|| "alloc".into())?;
        self.count_outliers(
            Corrections::Trial(&trial_d),
            n,
            nbk,
            &mut tot.slice_mut(4 * nbk..6 * nbk),
        )?;
        prof(s, "ocount")?;
        {
            let fscan = self.f("SCAN(kernel)", 0)?;
            let mut t4 = tot.slice_mut(0..4 * nbk);
            let mut l = s.launch_builder(&fscan);
            l.arg(&mut self.sizes).arg(&nb64).arg(&mut t4);
            unsafe { l.launch(cfg((1, 4 * nbk as u32), 1024, 0)) }
                .during(|| "launching SCAN".into())?;
            prof(s, "scans")?;
        }
        let mut mw2 = s.alloc_zeros::<u32>(nbk).during(|| "alloc".into())?;
        let mut l = s.launch_builder(&fm);
        l.arg(&self.nzf)
            .arg(&nb64)
            .arg(&nlev)
            .arg(&mut mw2)
            .arg(&mut self.out)
            .arg(&mofs_d);
        unsafe { l.launch(cfg((nbk as u32, 1), 256, map_smem as u32)) }
            .during(|| "launching MAP".into())?;
        prof(s, "map_write")?;
        let fw = self.f("WRITE(kernel)", 0)?;
        let mut l = s.launch_builder(&fw);
        l.arg(&self.ints)
            .arg(&trial_d)
            .arg(&tstride)
            .arg(&n64)
            .arg(&nb64)
            .arg(&self.mode)
            .arg(&self.sizes)
            .arg(&sec_d)
            .arg(&mut self.out);
        unsafe { l.launch(cfg(block_grid(nb * 32, nbk), 256, 0)) }
            .during(|| "launching WRITE".into())?;
        prof(s, "write")?;
        self.write_outliers(Corrections::Trial(&trial_d), (n, nbk), &osec_d, f32i)?;
        prof(s, "owrite")?;
        let tot_h = self.stage.down(&self.gpu, s, &tot)?;
        let host = download(s, &self.gpu, &mut self.pbytes, &self.out, total)?;
        self.stage.synchronized();
        // The header words: step, section word counts, outlier counts.
        let mut coded = Vec::with_capacity(nbk);
        for (bi, &tr) in trial.iter().enumerate() {
            let tr = tr as usize;
            let (len, words, mw, no, nr) = size_of(bi, tr);
            let scanned = [0, 1, 2, 3].map(|i| (tot_h[bi * 4 + i] as usize).div_ceil(32));
            if scanned != words || tot_h[4 * nbk + 2 * bi] as usize != no {
                return Err(CudaError::Unsupported(format!(
                    "brick {}: the sizing and writing passes disagree ({words:?} vs {scanned:?})",
                    b.bricks[bi]
                )));
            }
            let mut p = host[base[bi]..base[bi] + len].to_vec();
            p[0..8].copy_from_slice(&steps[bi][tr].to_le_bytes());
            let head = rice::StreamHeader {
                nnz: (sums_h[(tr * nbk + bi) * 4] / 5) as usize,
                words: [mw, words[0], words[1], words[2], words[3]],
            };
            for (i, w) in head.to_words().iter().enumerate() {
                p[8 + 4 * i..12 + 4 * i].copy_from_slice(&w.to_le_bytes());
            }
            let oc = 8 + 4 * (rice::StreamHeader::WORDS + mw + words.iter().sum::<usize>());
            p[oc..oc + 4].copy_from_slice(&(no as u32).to_le_bytes());
            p[oc + 4..oc + 8].copy_from_slice(&(nr as u32).to_le_bytes());
            let m = f64::from_bits(maxe_h[tr * nbk + bi]);
            coded.push((BatchBytes::own(p), m, sse_h[tr * nbk + bi], no));
        }
        Ok(coded)
    }
    /// Outliers counted per block of 32 into `cnt` and scanned into
    /// offsets; `tot` gets each brick's totals (outliers, exact ones).
    pub(super) fn count_outliers(
        &mut self,
        corrections: Corrections<'_>,
        n: usize,
        nbk: usize,
        tot: &mut CudaViewMut<'_, u64>,
    ) -> Result<(), CudaError> {
        let s = &self.stream.clone();
        let nb = n.div_ceil(32);
        let (n64, nb64, tstride) = (n as i64, nb as i64, (nbk * n) as i64);
        // A thread a bitmap word, or a thread a value.
        let (name, threads) = match corrections {
            Corrections::Marked(_) => ("OCOUNT_MASK(kernel)", nb),
            Corrections::Trial(_) => ("OCOUNT(kernel)", nb * 32),
        };
        let f = self.f(name, 0)?;
        let mut l = s.launch_builder(&f);
        l.arg(&self.corr);
        match corrections {
            Corrections::Marked(m) => l.arg(m),
            Corrections::Trial(trial_d) => l.arg(trial_d).arg(&tstride),
        };
        l.arg(&n64).arg(&nb64).arg(&mut self.cnt);
        unsafe { l.launch(cfg(block_grid(threads, nbk), 256, 0)) }
            .during(|| format!("launching {name}"))?;
        let f = self.f("SCAN(kernel)", 0)?;
        let mut l = s.launch_builder(&f);
        l.arg(&mut self.cnt).arg(&nb64).arg(tot);
        unsafe { l.launch(cfg((1, 2 * nbk as u32), 1024, 0)) }
            .during(|| "launching SCAN".into())?;
        Ok(())
    }

    /// The outlier lists (indices, corrections, exact values) at the byte
    /// offsets `osec_d` (three per brick), from `count_outliers`'s scan:
    /// the interpolation's from its marked corrections and its input as
    /// stored, the lifting coder's from its trial and `x`.
    pub(super) fn write_outliers(
        &mut self,
        corrections: Corrections<'_>,
        (n, nbk): (usize, usize),
        osec_d: &CudaSlice<u64>,
        f32i: i32,
    ) -> Result<(), CudaError> {
        let nb = n.div_ceil(32);
        let (n64, nb64, tstride) = (n as i64, nb as i64, (nbk * n) as i64);
        let (name, threads) = match corrections {
            Corrections::Marked(_) => ("OWRITE_MASK(kernel)", nb),
            Corrections::Trial(_) => ("OWRITE(kernel)", nb * 32),
        };
        let f = self.f(name, 0)?;
        let mut l = self.stream.launch_builder(&f);
        match corrections {
            Corrections::Marked(m) => {
                Input::stored(self.dtype, &self.in32, &self.in64)?.push(&mut l);
                l.arg(&self.corr).arg(m)
            }
            Corrections::Trial(trial_d) => {
                l.arg(&self.x).arg(&self.corr).arg(trial_d).arg(&tstride)
            }
        };
        l.arg(&n64)
            .arg(&nb64)
            .arg(&self.cnt)
            .arg(osec_d)
            .arg(&f32i)
            .arg(&mut self.out);
        unsafe { l.launch(cfg(block_grid(threads, nbk), 256, 0)) }
            .during(|| format!("launching {name}"))?;
        Ok(())
    }

    /// Each brick's rANS histogram (per context and symbol) of its details
    /// in `ints`, and the brick shape's level classes.
    pub(super) fn rans_histograms(
        &mut self,
        dims: [usize; 3],
        nbk: usize,
    ) -> Result<(CudaSlice<u32>, Arc<LevelClasses>), CudaError> {
        let n: usize = dims.iter().product();
        let s = &self.stream.clone();
        let n64 = n as i64;
        self.classes(dims, interp::Order::CURRENT)?;
        let cls = self
            .classes
            .get(&(dims, interp::Order::CURRENT))
            .cloned()
            .ok_or_else(|| CudaError::Unsupported("level classes".into()))?;
        let table = rans::NCTX * rans::NSYM;
        let mut hist = s
            .alloc_zeros::<u32>(nbk * table)
            .during(|| "alloc".into())?;
        let ints = self.ints.slice(0..nbk * n);
        prof(s, "r_before")?;
        let fh = self.f("RHIST(kernel)", table * 4)?;
        let mut l = s.launch_builder(&fh);
        l.arg(&ints).arg(&cls.values).arg(&n64).arg(&mut hist);
        unsafe {
            l.launch(cfg(
                (rhist_blocks(n, nbk), nbk as u32),
                256,
                (table * 4) as u32,
            ))
        }
        .during(|| "launching RHIST".into())?;
        prof(s, "r_hist_kernel")?;
        Ok((hist, cls))
    }

    /// RENC over a batch's chunk lists (device addresses of cfirst,
    /// cstart, clen, cum, scale), `most` chunks a brick at most and
    /// `nch` in all, on the slot's bulk stream.
    pub(super) fn launch_renc(
        &mut self,
        cls: &LevelClasses,
        n: usize,
        nbk: usize,
        (most, nch): (usize, usize),
        [cfirst, cstart, clen, cum, scale]: [u64; 5],
    ) -> Result<RencOut, CudaError> {
        let s = &self.stream.clone();
        let n64 = n as i64;
        let ints = self.ints.slice(0..nbk * n);
        let sizes = s.alloc_zeros::<u32>(nch.max(1)).during(|| "alloc".into())?;
        prof(s, "r_upload")?;
        let mut out = RencOut {
            states: s.alloc_zeros::<u32>(nch.max(1)).during(|| "alloc".into())?,
            sizes,
        };
        // The tried steps' quantized values are not needed by the
        // interpolation (one step): their room is RENC's scratch.
        let scratch = self.ints.slice(nbk * n..TRIALS * nbk * n);
        let f = self.f("RENC(kernel)", RENC_SMEM as usize)?;
        if tracing() {
            static ONCE: std::sync::Once = std::sync::Once::new();
            ONCE.call_once(|| {
                let per_sm = f.occupancy_max_active_blocks_per_multiprocessor(
                    RENC_THREADS,
                    RENC_SMEM as usize,
                    None,
                );
                eprintln!("trace RENC blocks an SM: {per_sm:?}");
            });
        }
        let bulk = &self.bulk;
        let ls = bulk_begin(s, bulk)?;
        let mut l = ls.launch_builder(&f);
        l.arg(&ints)
            .arg(&cls.values)
            .arg(&n64)
            .arg(&cfirst)
            .arg(&cstart)
            .arg(&clen)
            .arg(&cum)
            .arg(&scale)
            .arg(&mut out.sizes)
            .arg(&mut out.states)
            .arg(&scratch);
        let grid = (most.div_ceil(32).max(1) as u32, nbk.max(1) as u32);
        unsafe { l.launch(cfg(grid, RENC_THREADS, RENC_SMEM)) }
            .during(|| "launching RENC".into())?;
        bulk_end(s, bulk)?;
        prof(s, "r_enc_kernel")?;
        Ok(out)
    }

    /// The batch's plans on the host (`rans::plan` a brick, the CPU's
    /// code), their lists up, RENC, and the chunk sizes down.
    pub(super) fn host_plans_renc(
        &mut self,
        hist_h: &[u32],
        cls: &LevelClasses,
        n: usize,
        nbk: usize,
        chunk_log: u32,
    ) -> Result<(Vec<BrickPlan>, RencOut, Vec<u32>), CudaError> {
        use rayon::prelude::*;
        let s = &self.stream.clone();
        let table = rans::NCTX * rans::NSYM;
        let plans: Vec<rans::Plan> = hist_h
            .par_chunks(table)
            .map(|h| rans::plan(h, &cls.blocks, n, chunk_log))
            .collect();
        prof(s, "r_plan")?;
        let mut chunks = std::mem::take(&mut self.enc_lists.chunks);
        chunks.clear();
        for p in &plans {
            chunks.push_pieces(rans::pieces(n, p.chunk_log, p.split));
        }
        let nch = chunks.clen.len();
        let tables: Vec<&rans::Tables> = plans.iter().map(|p| &p.tables).collect();
        if tables.len() != nbk {
            return Err(CudaError::Unsupported(format!(
                "{} rANS plans for a batch of {nbk} bricks",
                tables.len()
            )));
        }
        let first = tables_bytes(&tables)?;
        prof(s, "r_chunks")?;
        // One copy of the tables and the three piece lists, kept until
        // RENC has read them; the tables are written straight into the
        // stage, in parallel.
        let [l0, l1, l2] = chunks.byte_lists();
        let (_lists_d, base, addr) = upload_packed(
            &self.gpu,
            s,
            PackedFrom::Stage(&mut self.stage),
            first,
            |pin| write_tables(pin, &tables),
            &[l0, l1, l2],
        )?;
        let [cfirst, cstart, clen] = addr[..] else {
            return Err(CudaError::Unsupported("chunk lists".into()));
        };
        let (cum, scale) = table_addresses(base, tables.len());
        prof(s, "r_lists_up")?;
        let out = self.launch_renc(
            cls,
            n,
            nbk,
            (chunks.most, nch),
            [cfirst, cstart, clen, cum, scale],
        )?;
        // The lists are on the device (copied up through the stage).
        self.enc_lists.chunks = chunks;
        let sizes_h = self.stage.down(&self.gpu, s, &out.sizes)?;
        let plans = plans
            .into_iter()
            .map(|p| BrickPlan {
                chunk_log: p.chunk_log,
                split: p.split,
                words: p.words,
            })
            .collect();
        Ok((plans, out, sizes_h[..nch].to_vec()))
    }

    /// The interpolation's payloads (trial 0 of `ints` and `corr`): rANS
    /// tables from the bricks' histograms (on the host by the CPU's code:
    /// planned on the device, RENC ended no sooner, the SMs being busy with
    /// other batches' work), the chunks' sizes
    /// and words and the outlier lists on the device, the layout on the
    /// host.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn encode_rans(
        &mut self,
        b: &Batch,
        q: &[f64],
        (counts_h, maxe_h, sse_h): (&[u64], &[u64], &[f64]),
        (hist_h, cls): (Vec<u32>, &LevelClasses),
        omask: &CudaSlice<u32>,
        (f32i, sz, chunk_log): (i32, usize, u32),
    ) -> Result<Vec<GpuCoded>, CudaError> {
        let dims = b.dims;
        let n: usize = dims.iter().product();
        let nbk = b.bricks.len();
        let s = &self.stream.clone();
        let (plans, renc, sizes_h) = self.host_plans_renc(&hist_h, cls, n, nbk, chunk_log)?;
        let RencOut { sizes, states } = renc;
        let nch = sizes_h.len();
        prof(s, "r_encode")?;
        // Layout: per brick the step, the stream (header, tables, chunk
        // lengths, data) and the outliers.
        let mut base = Vec::with_capacity(nbk);
        let mut heads = Vec::with_capacity(nbk);
        let mut stream_words = Vec::with_capacity(nbk);
        // Each payload's bytes, for its range and its checksum.
        let mut lens = Vec::with_capacity(nbk);
        let mut offs = std::mem::take(&mut self.enc_lists.offs);
        offs.clear();
        let mut osec = Vec::with_capacity(3 * nbk);
        let mut total = 0usize;
        let mut ch = 0usize;
        for (bi, p) in plans.iter().enumerate() {
            let nc = rans::piece_count(n, p.chunk_log, p.split);
            let head = rans::header_words(p.chunk_log, p.split, &p.words, &sizes_h[ch..ch + nc]);
            let data0 = total + 8 + 4 * head.len();
            let mut at = 0usize;
            for &len in &sizes_h[ch..ch + nc] {
                offs.push((data0 + 2 * at) as u64);
                at += len as usize;
            }
            ch += nc;
            let words = head.len() + at.div_ceil(2);
            heads.push(head);
            let (no, nr) = (counts_h[2 * bi] as usize, counts_h[2 * bi + 1] as usize);
            let o = total + 8 + 4 * words + 8;
            osec.extend([o, o + 4 * no, o + 8 * no].map(|v| v as u64));
            base.push(total);
            stream_words.push(words);
            lens.push(payload_len(words, no, nr, sz));
            total += lens[bi];
        }
        clear_out(s, &mut self.out, total)?;
        let offs_d = self.stage.up(&self.gpu, s, &offs)?;
        self.enc_lists.offs = offs;
        // Where each chunk's scratch starts, in words (4 a value).
        let mut spos = std::mem::take(&mut self.enc_lists.spos);
        spos.clear();
        spos.extend(plans.iter().enumerate().flat_map(|(bi, p)| {
            rans::pieces(n, p.chunk_log, p.split).map(move |(st, _)| 4 * (bi * n + st) as u64)
        }));
        let spos_d = self.stage.up(&self.gpu, s, &spos)?;
        self.enc_lists.spos = spos;
        let scratch = self.ints.slice(nbk * n..TRIALS * nbk * n);
        let f = self.f("RCOPY(kernel)", 0)?;
        let nch64 = nch as i64;
        let mut l = s.launch_builder(&f);
        l.arg(&scratch)
            .arg(&spos_d)
            .arg(&sizes)
            .arg(&states)
            .arg(&offs_d)
            .arg(&nch64)
            .arg(&mut self.out);
        let gx = nch.clamp(1, 65535) as u32;
        unsafe { l.launch(cfg((gx, nch.div_ceil(65535).max(1) as u32), 256, 0)) }
            .during(|| "launching RCOPY".into())?;
        prof(s, "r_copy")?;
        // The outlier lists, from the values the interpolation marked
        // (none to list in most batches: their totals stay zero).
        let mut tot = s.alloc_zeros::<u64>(2 * nbk).during(|| "alloc".into())?;
        if counts_h[..2 * nbk].iter().any(|&c| c != 0) {
            let marked = Corrections::Marked(omask);
            self.count_outliers(marked, n, nbk, &mut tot.slice_mut(..))?;
            let osec_d = self.stage.up(&self.gpu, s, &osec)?;
            self.write_outliers(marked, (n, nbk), &osec_d, f32i)?;
        }
        let tot_q = self.stage.queue_down(&self.gpu, s, &tot)?;
        prof(s, "r_olists")?;
        // The checksums are taken on the device after the host's parts of
        // each payload are put in beside the coded words.
        let crc_d = self.payload_checksums((&base, &stream_words, &lens, &heads), q, counts_h)?;
        let crc_q = self.stage.queue_down(&self.gpu, s, &crc_d)?;
        prof(s, "r_crc_queued")?;
        // The payloads lie one after another in the buffer they are copied
        // down into, which becomes the file's bytes. One wait for all
        // copies.
        let mut buf = take_payload_buffer(&self.gpu, total)?;
        prof(s, "r_buf")?;
        let n_out = total.max(1).min(self.out.len());
        s.memcpy_dtoh(&self.out.slice(0..n_out), &mut buf[..n_out])
            .during(|| "copying payloads to the host".into())?;
        prof(s, "r_down_queued")?;
        self.stage.wait(s)?;
        let tot_h = self.stage.read(&tot_q);
        let crcs = self.stage.read(&crc_q);
        prof(s, "r_outliers")?;
        let mut ranges = Vec::with_capacity(nbk);
        for bi in 0..nbk {
            let no = counts_h[2 * bi] as usize;
            if tot_h[2 * bi] as usize != no {
                return Err(CudaError::Unsupported(format!(
                    "brick {}: the outlier check and the outlier lists disagree",
                    b.bricks[bi]
                )));
            }
            ranges.push(base[bi]..base[bi] + lens[bi]);
        }
        prof(s, "r_heads")?;
        prof(s, "r_crc_device")?;
        let buf = Arc::new(BatchBuf::Pinned(Some(buf)));
        Ok(ranges
            .into_iter()
            .zip(crcs)
            .enumerate()
            .map(|(bi, (at, crc))| {
                let no = counts_h[2 * bi] as usize;
                let p = BatchBytes {
                    buf: buf.clone(),
                    at,
                    crc,
                };
                (p, f64::from_bits(maxe_h[bi]), sse_h[bi], no)
            })
            .collect())
    }
}
