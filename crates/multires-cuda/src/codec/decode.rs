//! A slot's decoding of one batch, and the decode plans that place the
//! decoded bricks into a field (in host memory, page-locked, or on GPUs).

use super::*;

impl Slot {
    /// Decodes a batch of bricks of one shape into the pinned buffer
    /// (rounded to the stored type; outliers not applied). Per brick, where
    /// its outlier section starts, or None when the device found it
    /// inconsistent.
    pub(super) fn decode(
        &mut self,
        dims: [usize; 3],
        list: &[Payload],
        r: &codec::MrzReader,
    ) -> Result<Vec<Option<usize>>, CudaError> {
        Ok(self.decode_to(dims, list, r, (true, None, &|_| ()))?.0)
    }

    /// `decode`, leaving the decoded doubles in the slot's `y` (for
    /// `decode_plan` to round and place) unless `down`; `turn` returns
    /// when each phase may start (`InOrder`). The interpolation's inverse
    /// also places its values as float32 in `field` (at, brick origins,
    /// rows, columns) when given: then the second value returned is true.
    /// The payloads' checksums still to verify are verified while the
    /// batch's kernels run (`r`, the file, names a brick that fails).
    pub(super) fn decode_to(
        &mut self,
        dims: [usize; 3],
        list: &[Payload],
        r: &codec::MrzReader,
        (down, field, turn): (bool, Option<FieldPlace<'_>>, &dyn Fn(DecodePhase)),
    ) -> Result<(Vec<Option<usize>>, bool), CudaError> {
        let h = r.header();
        let n: usize = dims.iter().product();
        let nbk = list.len();
        let closed = h.transform == lifting::Lifting::Interp;
        if down {
            self.pin_values()?;
        }
        let io = interp::Order::of_version(h.version);
        let table = order_table_read(h.transform, io);
        if table {
            self.order(dims, h.transform, io)?;
        }
        let s = &self.stream.clone();
        turn(DecodePhase::Entropy);
        let Front {
            at,
            q,
            err,
            check,
            up,
        } = if closed {
            self.rans_front(dims, list, io)?
        } else {
            self.rice_front(dims, list)?
        };
        let q_d = self.stage.up(&self.gpu, s, &q)?;
        let inverse = if table {
            Some(&coding_order(&self.orders, dims, h.transform, io)?.inverse)
        } else {
            None
        };
        turn(DecodePhase::Inverse);
        let mut placed = false;
        if closed {
            // The interpolation reads its details (whole numbers) straight
            // from the decoded integers, and rounds its values into the
            // field or the stored values as it makes them.
            let place = match (field, down, h.dtype, &mut self.in32) {
                (Some((at, org, rows, cols)), ..) => Some(Place::Field {
                    at: at()?,
                    org,
                    rows,
                    cols,
                }),
                (None, true, DType::F32, Some(v)) => Some(Place::Batch(v)),
                _ => None,
            };
            placed = place.is_some();
            interp_passes(
                &self.gpu,
                s,
                Input::F64(&self.x),
                &mut self.y,
                &mut self.c,
                &q_d,
                dims,
                nbk,
                InterpPass::Inverse(&self.ints, inverse, place),
            )?;
        } else {
            let inverse = inverse.ok_or_else(|| CudaError::Unsupported("coding order".into()))?;
            let ints = self.ints.slice(0..nbk * n);
            dequantize_and_lift(
                &self.gpu,
                s,
                &ints,
                inverse,
                &q_d,
                &mut self.y,
                dims,
                nbk,
                h.transform,
            )?;
        }
        prof(s, "d_inverse")?;
        if down {
            self.round_down(h.dtype, nbk * n, placed)?;
        }
        prof(s, "d_download")?;
        if let Some(up) = &up {
            up.synchronize()
                .during(|| "waiting for the batch's streams".into())?;
        }
        if let Err(e) = verify_payloads(r, list) {
            // Nothing may free what the queued copies read from (a file
            // in page-locked memory) before they are done.
            let _ = s.synchronize();
            return Err(e);
        }
        trace("d_verified");
        // Each copy down waits for the batch's work queued before it.
        let err_q = self.stage.queue_down(&self.gpu, s, &err)?;
        let tot_q = match &check {
            Some((tot, _)) => Some(self.stage.queue_down(&self.gpu, s, tot)?),
            None => None,
        };
        self.stage.wait(s)?;
        trace("d_waited");
        let err_h = self.stage.read(&err_q);
        let tot_h = tot_q.map(|q| self.stage.read(&q));
        let at = (0..nbk)
            .map(|bi| {
                at[bi].filter(|_| {
                    err_h[bi] == 0
                        && match (&tot_h, &check) {
                            (Some(t), Some((_, nnz))) => t[bi] as usize == nnz[bi],
                            _ => true,
                        }
                })
            })
            .collect();
        Ok((at, placed))
    }

    /// The batch's `total` decoded doubles (`y`) rounded to the stored type
    /// on the device (unless the inverse `placed` them there) and down
    /// into the pinned buffer.
    pub(super) fn round_down(
        &mut self,
        dtype: DType,
        total: usize,
        placed: bool,
    ) -> Result<(), CudaError> {
        let s = &self.stream.clone();
        let f = if placed {
            None
        } else {
            Some(self.f(&format!("TO_DTYPE(kernel, {})", cuda_type(dtype)), 0)?)
        };
        let count = total as i64;
        let grid = ((total.div_ceil(256)).min(65535) as u32, 1);
        macro_rules! down {
            ($dev:expr, $pin:expr) => {{
                let dev = $dev
                    .as_mut()
                    .ok_or_else(|| CudaError::Unsupported("no buffer".into()))?;
                if let Some(f) = &f {
                    let mut l = s.launch_builder(f);
                    l.arg(&self.y).arg(&mut *dev).arg(&count);
                    unsafe { l.launch(cfg(grid, 256, 0)) }
                        .during(|| "launching TO_DTYPE".into())?;
                }
                let pin = $pin
                    .as_mut()
                    .ok_or_else(|| CudaError::Unsupported("no buffer".into()))?;
                s.memcpy_dtoh(&dev.slice(0..total), &mut pin[..total])
                    .during(|| "copying decoded bricks to the host".into())?;
            }};
        }
        match dtype {
            DType::F32 => down!(self.in32, self.pin32),
            DType::F64 => down!(self.in64, self.pin64),
        }
        Ok(())
    }

    /// The rANS streams of a batch decoded into `ints`, a chunk per
    /// thread: per brick where its outliers start (None: its header does
    /// not read), its step, and the device's fault flags.
    pub(super) fn rans_front(
        &mut self,
        dims: [usize; 3],
        list: &[Payload],
        io: interp::Order,
    ) -> Result<Front, CudaError> {
        let n: usize = dims.iter().product();
        let nbk = list.len();
        self.classes(dims, io)?;
        let s = &self.stream.clone();
        use rayon::prelude::*;
        trace("d_begin");
        let head = |(_, p, _): &Payload| codec::brick_rans_header(p, n).ok();
        let heads: Vec<Option<(f64, rans::Header)>> = list.iter().map(head).collect();
        trace("d_heads");
        let DecodeLists {
            mut doff,
            mut dlen,
            mut rmask,
            mut chunks,
        } = std::mem::take(&mut self.dec_lists);
        doff.clear();
        dlen.clear();
        rmask.clear();
        chunks.clear();
        let mut at = vec![None; nbk];
        let mut q = vec![1.0f64; nbk];
        // Each stream's data bytes, and its chunks' offsets (from the
        // stream's start until its place in the upload is known).
        let mut parts: Vec<Part> = Vec::new();
        let mut total = 0usize;
        let mut zero_tiles = false;
        // Each brick's tables (zeros where it has no stream), written
        // straight into the upload (`write_tables`), as the coder's are.
        let none = rans::Tables {
            freq: Vec::new(),
            cum: vec![0; CUM_BYTES / 4],
            scale: vec![0; SCALE_BYTES / 4],
        };
        let mut tables: Vec<&rans::Tables> = Vec::with_capacity(nbk);
        for (bi, head) in heads.iter().enumerate() {
            let Some((step, h)) = head else {
                // Decoded to nothing here, then redone on the CPU.
                chunks.push_pieces(std::iter::empty());
                tables.push(&none);
                rmask.push(0);
                continue;
            };
            let range = 8 + 4 * h.data_word..8 + 4 * h.used;
            total += range.len();
            let first = doff.len();
            for w in h.offsets.windows(2) {
                doff.push((2 * w[0]) as u64);
                dlen.push((w[1] - w[0]) as u32);
            }
            parts.push((bi, range, first..doff.len()));
            chunks.push_pieces(rans::pieces(n, h.chunk_log, h.split));
            tables.push(&h.tables);
            rmask.push(h.reset as u32 - 1);
            zero_tiles |= rans::zero_classes(&h.tables) != 0;
            q[bi] = *step;
            at[bi] = Some(8 + 4 * h.used);
        }
        trace("d_chunks");
        let err = s.alloc_zeros::<u32>(nbk).during(|| "alloc".into())?;
        if chunks.clen.is_empty() {
            self.dec_lists = DecodeLists {
                doff,
                dlen,
                rmask,
                chunks,
            };
            return Ok(Front {
                at,
                q,
                err,
                check: None,
                up: None,
            });
        }
        let mut err = err;
        let tables_len = tables_bytes(&tables)?;
        trace("d_lists");
        use bytemuck::cast_slice;
        // Streams in page-locked memory go up from where they lie, in one
        // copy for each run of streams close together in the file (those
        // of consecutive bricks, with the headers and outliers between
        // them), and only the lists through the pinned buffer; the others
        // are gathered, packed, into the pinned buffer.
        let locked: Option<Vec<_>> = parts
            .iter()
            .map(|(bi, r, _)| {
                let st = &list[*bi].1[r.clone()];
                page_locked(st).map(|buf| (st, buf))
            })
            .collect();
        let spans = locked.map(stream_spans);
        // Where each stream starts in the upload: its span's place, or
        // packed one after another.
        let starts: Vec<usize> = match &spans {
            Some(spans) => spans.at.clone(),
            None => parts
                .iter()
                .scan(0, |at, p| {
                    let o = *at;
                    *at += p.1.len();
                    Some(o)
                })
                .collect(),
        };
        for ((_, _, offs), at) in parts.iter().zip(&starts) {
            doff[offs.clone()].iter_mut().for_each(|o| *o += *at as u64);
        }
        // The streams (zero bytes after them: RDEC_PAD) and the chunk lists
        // in the slot's pinned buffer, then up in one copy: six pageable
        // copies a batch stalled behind the other slots' copies.
        let [l0, l1, l2] = chunks.byte_lists();
        let lists = [
            l0,
            l1,
            l2,
            cast_slice(&dlen),
            cast_slice(&doff),
            cast_slice(&rmask),
        ];
        trace("d_concat");
        // Without spans (the only case it runs), `starts` packs the
        // streams back to back: cut from the end, each ends where the next
        // starts.
        let gather = |data: &mut [u8]| {
            let (streams, pad) = data.split_at_mut(total);
            pad.fill(0);
            let mut left = streams;
            let mut dsts: Vec<&mut [u8]> = starts
                .iter()
                .rev()
                .map(|&at| {
                    let (head, d) = std::mem::take(&mut left).split_at_mut(at);
                    left = head;
                    d
                })
                .collect();
            dsts.reverse();
            let copy =
                |(d, (bi, r, _)): (&mut [u8], &Part)| d.copy_from_slice(&list[*bi].1[r.clone()]);
            if total > GATHER_PARALLEL_BYTES {
                dsts.into_par_iter().zip(parts.par_iter()).for_each(copy);
            } else {
                dsts.into_iter().zip(parts.iter()).for_each(copy);
            }
        };
        let mut streams_up = None;
        // The tables go first in the upload, or after the gathered streams.
        let (_up, base, tables_at, addr) = if let Some(spans) = spans {
            let (up, up_base, addr) = upload_packed(
                &self.gpu,
                s,
                PackedFrom::Pinned(&mut self.pbytes),
                tables_len,
                |pin| write_tables(pin, &tables),
                &lists,
            )?;
            // Profile marks: the fault flags' memset and the lists' copy done, the pad's
            // memset done, the streams up; what a batch's streams wait on.
            prof(s, "d_lists_up")?;
            // The slot's own buffer: one allocated a batch waited for the
            // pool to map memory (0.1-6.6 ms on the tail of a 2-GPU
            // decode).
            let len = spans.total + RDEC_PAD;
            if self.up_streams.as_ref().is_none_or(|b| b.len() < len) {
                self.up_streams = None;
                let cap = len.next_power_of_two();
                self.up_streams =
                    Some(unsafe { s.alloc::<u8>(cap) }.during(|| "allocating streams".into())?);
            }
            let streams = self
                .up_streams
                .as_mut()
                .ok_or_else(|| CudaError::Unsupported("no stream buffer".into()))?;
            s.memset_zeros(&mut streams.slice_mut(spans.total..len))
                .during(|| "zeroing".into())?;
            prof(s, "d_zeroed")?;
            for (from, at) in &spans.copies {
                s.memcpy_htod(*from, &mut streams.slice_mut(*at..*at + from.len()))
                    .during(|| "copying a batch's streams to the GPU".into())?;
            }
            prof(s, "d_streams_up")?;
            {
                use cudarc::driver::sys::CUevent_flags::CU_EVENT_DISABLE_TIMING;
                streams_up = Some(
                    s.record_event(Some(CU_EVENT_DISABLE_TIMING))
                        .during(|| "recording the batch's streams".into())?,
                );
            }
            let base = {
                use cudarc::driver::DevicePtr;
                streams.device_ptr(s).0
            };
            DIRECT_BATCHES.fetch_add(1, Ordering::Relaxed);
            (up, base, up_base, addr)
        } else {
            let at = (total + RDEC_PAD).next_multiple_of(16);
            let (up, base, addr) = upload_packed(
                &self.gpu,
                s,
                PackedFrom::Pinned(&mut self.pbytes),
                at + tables_len,
                |pin| {
                    let (streams, t) = pin.split_at_mut(at);
                    gather(&mut streams[..total + RDEC_PAD]);
                    write_tables(t, &tables);
                },
                &lists,
            )?;
            (up, base, base + at as u64, addr)
        };
        trace("d_gathered");
        let cls = self
            .classes
            .get(&(dims, io))
            .ok_or_else(|| CudaError::Unsupported("level classes".into()))?;
        let n64 = n as i64;
        prof(s, "d_rdec_before")?;
        let f = self.f("RDEC(kernel)", rdec_smem(RDEC_MAX_WARPS) as usize)?;
        trace("d_rdec_fn");
        let mut ints = self.ints.slice_mut(0..nbk * n);
        let [cfirst, cstart, clen, dlen_d, doff_d, rmask_d] = addr[..] else {
            return Err(CudaError::Unsupported("chunk lists".into()));
        };
        let (cum, scale) = table_addresses(tables_at, nbk);
        // Where a brick's tables leave a class only zeros after a zero,
        // RDEC passes over the warps' tiles of such values (on smooth
        // fields nearly every chunk but a brick's first few) and leaves
        // them as zeroed here.
        let tiles = if zero_tiles {
            s.memset_zeros(&mut ints).during(|| "zeroing".into())?;
            Some(&cls.tiles)
        } else {
            None
        };
        let bulk = &self.bulk;
        let ls = bulk_begin(s, bulk)?;
        trace("d_rdec_bulk");
        let mut l = ls.launch_builder(&f);
        l.arg(&base).arg(&doff_d).arg(&dlen_d).arg(&cls.values);
        match tiles {
            Some(t) => l.arg(t),
            None => l.arg(&NO_BUFFER),
        };
        l.arg(&n64)
            .arg(&cfirst)
            .arg(&cstart)
            .arg(&clen)
            .arg(&cum)
            .arg(&scale)
            .arg(&rmask_d)
            .arg(&mut ints)
            .arg(&mut err);
        let warps = rdec_warps(chunks.most);
        unsafe { l.launch(cfg(chunks.grid(warps), 32 * warps, rdec_smem(warps))) }
            .during(|| "launching RDEC".into())?;
        trace("d_rdec_launched");
        bulk_end(s, bulk)?;
        prof(s, "d_decode")?;
        // The lists went up with the batch's copy (from the pinned buffer),
        // which the stream's next wait covers; their vectors are reused.
        self.dec_lists = DecodeLists {
            doff,
            dlen,
            rmask,
            chunks,
        };
        Ok(Front {
            at,
            q,
            err,
            check: None,
            up: streams_up,
        })
    }

    /// The Rice streams of a batch decoded into `ints`: per brick where its
    /// outliers start (None: not a stream), its step, the device's fault
    /// flags, and the nonzero-block totals to check.
    pub(super) fn rice_front(
        &mut self,
        dims: [usize; 3],
        list: &[Payload],
    ) -> Result<Front, CudaError> {
        let n: usize = dims.iter().product();
        let nb = n.div_ceil(32);
        let nbk = list.len();
        let s = &self.stream.clone();
        // All payloads as words; per brick the sections' offsets and lengths.
        let mut words: Vec<u32> = Vec::new();
        let mut sec = vec![0u64; 5 * nbk];
        let mut secw = vec![0u32; 5 * nbk];
        let mut mapw = vec![0u32; nbk];
        let mut q = vec![1.0f64; nbk];
        let mut at = vec![None; nbk];
        let mut nnz = vec![0usize; nbk];
        let mut stride = 1usize;
        for (bi, (_, p, _)) in list.iter().enumerate() {
            let base = words.len();
            if let Some(x) = sections(p, n) {
                words.extend(
                    p[..x.outliers_at]
                        .chunks_exact(4)
                        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                );
                for i in 0..5 {
                    sec[5 * bi + i] = (base + x.sec[i].0) as u64;
                    secw[5 * bi + i] = x.sec[i].1 as u32;
                }
                mapw[bi] = x.sec[0].1 as u32;
                q[bi] = x.q;
                nnz[bi] = x.nnz;
                stride = stride.max(x.sec[4].1);
                at[bi] = Some(x.outliers_at);
            } else {
                // A dummy brick: an empty map, decoded to nothing, then redone on the CPU.
                words.push(0);
                sec[5 * bi] = base as u64;
                mapw[bi] = 1;
            }
        }
        words.push(0);
        let words_d = s
            .clone_htod(&words)
            .during(|| "copying payloads to the GPU".into())?;
        let sec_d = self.stage.up(&self.gpu, s, &sec)?;
        let secw_d = self.stage.up(&self.gpu, s, &secw)?;
        let mapw_d = self.stage.up(&self.gpu, s, &mapw)?;
        let mut err = s.alloc_zeros::<u32>(nbk).during(|| "alloc".into())?;
        let mut tot = s.alloc_zeros::<u64>(4 * nbk).during(|| "alloc".into())?;
        let mut pc = s
            .alloc_zeros::<u32>(nbk * stride)
            .during(|| "alloc".into())?;
        let levels = rice::map_levels(nb);
        let nlev = levels.len() as i32;
        let smem = (levels.iter().sum::<usize>() * 4) as u32;
        let (n64, nb64, st64) = (n as i64, nb as i64, stride as i64);
        let bnb = nbk * nb;
        let fscan = self.f("SCAN(kernel)", 0)?;
        let fdmode = self.f("DMODE(kernel)", 0)?;
        let fdsize = self.f("DSIZE(kernel)", 0)?;
        let fpopc = self.f("POPC(kernel)", 0)?;
        let fdecode = self.f("DECODE(kernel)", 0)?;
        let (mut a, mut rest) = self.sizes.split_at_mut(bnb);
        let (mut sp, mut rest) = rest.split_at_mut(bnb);
        let mut lo_ones = rest.slice_mut(0..2 * bnb);
        let f = self
            .gpu
            .function(Kernel::Codec, "DMAP(kernel)", smem as usize)?;
        let mut l = s.launch_builder(&f);
        l.arg(&words_d)
            .arg(&sec_d)
            .arg(&mapw_d)
            .arg(&nb64)
            .arg(&nlev)
            .arg(&mut self.nzf)
            .arg(&mut a)
            .arg(&mut err);
        unsafe { l.launch(cfg((nbk as u32, 1), 256, smem)) }.during(|| "launching DMAP".into())?;
        prof(s, "d_map")?;
        let mut t0 = tot.slice_mut(0..nbk);
        let mut l = s.launch_builder(&fscan);
        l.arg(&mut a).arg(&nb64).arg(&mut t0);
        unsafe { l.launch(cfg((1, nbk as u32), 1024, 0)) }.during(|| "launching SCAN".into())?;
        let mut l = s.launch_builder(&fdmode);
        l.arg(&words_d)
            .arg(&sec_d)
            .arg(&secw_d)
            .arg(&nb64)
            .arg(&self.nzf)
            .arg(&mut a)
            .arg(&mut self.mode)
            .arg(&mut sp)
            .arg(&mut err);
        unsafe { l.launch(cfg(block_grid(nb, nbk), 256, 0)) }
            .during(|| "launching DMODE".into())?;
        let mut t1 = tot.slice_mut(nbk..2 * nbk);
        let mut l = s.launch_builder(&fscan);
        l.arg(&mut sp).arg(&nb64).arg(&mut t1);
        unsafe { l.launch(cfg((1, nbk as u32), 1024, 0)) }.during(|| "launching SCAN".into())?;
        {
            let (mut low, mut ones) = lo_ones.split_at_mut(bnb);
            let mut l = s.launch_builder(&fdsize);
            l.arg(&words_d)
                .arg(&sec_d)
                .arg(&secw_d)
                .arg(&nb64)
                .arg(&self.nzf)
                .arg(&self.mode)
                .arg(&mut sp)
                .arg(&mut low)
                .arg(&mut ones)
                .arg(&mut err);
            unsafe { l.launch(cfg(block_grid(nb, nbk), 256, 0)) }
                .during(|| "launching DSIZE".into())?;
        }
        let mut t23 = tot.slice_mut(2 * nbk..4 * nbk);
        let mut l = s.launch_builder(&fscan);
        l.arg(&mut lo_ones).arg(&nb64).arg(&mut t23);
        unsafe { l.launch(cfg((1, 2 * nbk as u32), 1024, 0)) }
            .during(|| "launching SCAN".into())?;
        let mut l = s.launch_builder(&fpopc);
        l.arg(&words_d)
            .arg(&sec_d)
            .arg(&secw_d)
            .arg(&st64)
            .arg(&mut pc);
        unsafe { l.launch(cfg(block_grid(stride, nbk), 256, 0)) }
            .during(|| "launching POPC".into())?;
        let mut tpc = s.alloc_zeros::<u64>(nbk).during(|| "alloc".into())?;
        let mut l = s.launch_builder(&fscan);
        l.arg(&mut pc).arg(&st64).arg(&mut tpc);
        unsafe { l.launch(cfg((1, nbk as u32), 1024, 0)) }.during(|| "launching SCAN".into())?;
        let (mut low, mut ones) = lo_ones.split_at_mut(bnb);
        let mut ints = self.ints.slice_mut(0..nbk * n);
        let mut l = s.launch_builder(&fdecode);
        l.arg(&words_d)
            .arg(&sec_d)
            .arg(&secw_d)
            .arg(&n64)
            .arg(&nb64)
            .arg(&self.nzf)
            .arg(&self.mode)
            .arg(&mut sp)
            .arg(&mut low)
            .arg(&mut ones)
            .arg(&pc)
            .arg(&st64)
            .arg(&mut ints)
            .arg(&mut err);
        unsafe { l.launch(cfg(block_grid(nb, nbk), 256, 0)) }
            .during(|| "launching DECODE".into())?;
        prof(s, "d_decode")?;
        Ok(Front {
            at,
            q,
            err,
            check: Some((tot, nnz)),
            up: None,
        })
    }

    /// The last decoded batch in the pinned buffer, as stored.
    pub(super) fn decoded(&self) -> Result<DecodedView<'_>, CudaError> {
        Ok(match (&self.pin32, &self.pin64) {
            (Some(p), _) => DecodedView::F32(p),
            (_, Some(p)) => DecodedView::F64(p),
            _ => return Err(CudaError::Unsupported("no pinned buffer".into())),
        })
    }
}

/// The header of a float32 file; a float64 one is an error naming `what`
/// was asked and what to do instead. A fast-profile file passes: its
/// callers (one GPU's field or page-locked memory) decode it in
/// `fast`.
pub(super) fn float32_header(
    r: &codec::MrzReader,
    what: &str,
    instead: &str,
) -> Result<codec::MrzHeader, CudaError> {
    if r.header().transform != codec::Lifting::Lorenzo {
        gpu_decodable(r)?;
    }
    let h = r.header().clone();
    if h.dtype != DType::F32 {
        return Err(CudaError::Unsupported(format!(
            "{}: a float64 file; {what} takes float32 files ({instead})",
            r.path()
        )));
    }
    Ok(h)
}

/// Lossless files decode on the CPU: the kernels decode quantized
/// residuals, not the ordered-integer images the lossless coder stores.
pub(super) fn gpu_decodable(r: &codec::MrzReader) -> Result<(), CudaError> {
    if r.header().is_lossless() {
        return Err(CudaError::Unsupported(format!(
            "{}: a lossless file, which decodes on the CPU (device cpu)",
            r.path()
        )));
    }
    if r.header().transform == codec::Lifting::Lorenzo {
        return Err(CudaError::Unsupported(format!(
            "{}: a fast-profile (lorenzo) file, which decodes on the CPU in this build (device cpu)",
            r.path()
        )));
    }
    Ok(())
}

/// The header of a float32 file to be decoded into GPU memory, and the
/// decoded field's shape.
pub(super) fn device_field_of(
    r: &codec::MrzReader,
) -> Result<(codec::MrzHeader, FieldInfo), CudaError> {
    let h = float32_header(
        r,
        "decoding into GPU memory",
        "decompress it to the host instead",
    )?;
    let info = FieldInfo {
        dims: h.dims,
        ndim: h.ndim,
        dtype: h.dtype,
    };
    Ok((h, info))
}

/// Every brick of the float32 file `r` decoded on `gpus` and placed into
/// the field at device address `at` (GPU memory, or mapped host memory);
/// bricks are disjoint, so slots place theirs side by side.
pub(super) fn decode_into(
    r: &codec::MrzReader,
    gpus: &[Arc<Gpu>],
    at: FieldAddress,
    reserve: usize,
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(), CudaError> {
    let plan = payload_batches(
        r,
        &[codec::full_region(r.header().dims)],
        gpus,
        (RESIDENT_BATCH, RESIDENT_SLOTS, RESIDENT_SHARES),
        reserve,
    )?;
    let done = AtomicUsize::new(0);
    let at: Placement = (at, &|_| (), None, true);
    decode_plan(r, &plan, gpus, at, (&done, progress))
}

/// A field's device address (GPU memory, or mapped host memory), asked
/// for when a batch is placed: it may still be being allocated.
pub(super) type FieldAddress<'a> = &'a (dyn Fn() -> Result<u64, CudaError> + Sync);

/// Where decoded bricks go, what to tell when a batch of a group is
/// there (its group), and the order batches keep, if any.
pub(super) type Placement<'a> = (
    FieldAddress<'a>,
    &'a (dyn Fn(usize) + Sync),
    Option<&'a InOrder>,
    bool,
);

/// Where a batch's decoding stands (`InOrder`).
#[derive(Clone, Copy)]
pub(super) enum DecodePhase {
    Entropy,
    Inverse,
}

/// Batches (by index) that start their entropy decoding, and their
/// inverse transform and placing, only a few unfinished batches behind
/// the earliest: the pinned decoder copies a group of brick layers down
/// once all its batches are placed. With every batch side by side the
/// rANS chains of all shared the SMs, and all groups were done together,
/// late, with nothing copied before. Batches start in index order
/// (`run_slots`), so a batch waits only for batches already under way,
/// and the earliest unfinished one never waits.
pub(super) struct InOrder {
    pub(super) finished: Mutex<Vec<bool>>,
    pub(super) moved: Condvar,
    /// Unfinished batches before one that may start each phase.
    pub(super) ahead: (usize, usize),
}

/// Batch `.1`'s place in an `InOrder`, finished when dropped (however
/// its decoding ends).
pub(super) struct Turn<'a>(pub(super) &'a InOrder, usize);

impl InOrder {
    pub(super) fn new(batches: usize, (entropy, inverse): (usize, usize)) -> Self {
        InOrder {
            finished: Mutex::new(vec![false; batches]),
            moved: Condvar::new(),
            ahead: (entropy.max(1), inverse.max(1)),
        }
    }

    pub(super) fn turn(&self, i: usize) -> Turn<'_> {
        Turn(self, i)
    }
}

impl Turn<'_> {
    /// Until fewer batches before this one are unfinished than `phase`
    /// allows.
    pub(super) fn wait(&self, phase: DecodePhase) {
        let o = self.0;
        let most = match phase {
            DecodePhase::Entropy => o.ahead.0,
            DecodePhase::Inverse => o.ahead.1,
        };
        let mut f = o.finished.lock().unwrap_or_else(|p| p.into_inner());
        while f[..self.1.min(f.len())].iter().filter(|d| !**d).count() >= most {
            f = o.moved.wait(f).unwrap_or_else(|p| p.into_inner());
        }
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        let o = self.0;
        let mut f = o.finished.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(d) = f.get_mut(self.1) {
            *d = true;
        }
        o.moved.notify_all();
    }
}

/// A field's address, or why it could not be allocated, handed from the
/// thread that allocates it to the slots (which wait for it).
#[derive(Default)]
pub(super) struct FieldAt {
    pub(super) at: Mutex<Option<Result<u64, String>>>,
    pub(super) ready: std::sync::Condvar,
}

impl FieldAt {
    /// Hands `at` to the waiting slots; the first answer stands (the
    /// allocating thread's, before its guard's on drop, which keeps slots
    /// from waiting forever on a thread that stopped early).
    pub(super) fn answer(&self, at: Result<u64, String>) {
        let mut g = self.at.lock().unwrap_or_else(|p| p.into_inner());
        if g.is_none() {
            *g = Some(at);
            self.ready.notify_all();
        }
    }

    pub(super) fn get(&self) -> Result<u64, CudaError> {
        let mut g = self.at.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match &*g {
                Some(Ok(at)) => return Ok(*at),
                Some(Err(e)) => return Err(CudaError::Unsupported(e.clone())),
                None => g = self.ready.wait(g).unwrap_or_else(|p| p.into_inner()),
            }
        }
    }
}

/// The batches of `plan` decoded on `gpus` and placed into the field at
/// device address `at`, `placed` told of each batch's group once its
/// values are there; `done` counts bricks for `progress`.
pub(super) fn decode_plan(
    r: &codec::MrzReader,
    plan: &Plan<Payload>,
    gpus: &[Arc<Gpu>],
    (at, placed, order, in_device): Placement,
    (done, progress): (&AtomicUsize, &(dyn Fn(usize) + Sync)),
) -> Result<(), CudaError> {
    let caps = plan.caps();
    let batches = &plan.batches;
    let (h, grid) = (r.header(), &r.grid());
    run_slots(
        gpus,
        plan.slots,
        (&caps, h.dtype, Use::Decode),
        &|slot, i| {
            let (dims, list) = &batches[i];
            let n: usize = dims.iter().product();
            let turn = order.map(|o| o.turn(i));
            let wait = |phase| {
                if let Some(t) = &turn {
                    t.wait(phase);
                }
            };
            let s = &slot.stream.clone();
            let org_h = origins(grid, list.iter().map(|(k, _, _)| *k));
            let org = slot.stage.up(&slot.gpu, s, &org_h)?;
            let (yy, xx) = (h.dims[1] as i64, h.dims[2] as i64);
            // The interpolation's inverse places the values in a field in
            // GPU memory itself.
            let field = if in_device && h.transform == lifting::Lifting::Interp {
                Some((at, &org, yy, xx))
            } else {
                None
            };
            let (outliers_at, fused) = slot.decode_to(*dims, list, r, (false, field, &wait))?;
            prof(&slot.stream, "d_device")?;
            let checked = check_batch(*dims, list, &outliers_at, h, r.path(), grid)?;
            // Brick-local index i of batch brick bi, in the field.
            let field_at = |bi: usize, i: usize| -> u64 {
                let (z, y, x) = (i / (dims[1] * dims[2]), i / dims[2] % dims[1], i % dims[2]);
                let o = &org_h[3 * bi..3 * bi + 3];
                (((o[0] + z as i64) * yy + o[1] + y as i64) * xx + o[2] + x as i64) as u64
            };
            let (mut pos, mut steps, mut exact) = (Vec::new(), Vec::new(), Vec::new());
            for (bi, c) in checked.iter().enumerate() {
                match c {
                    // Its doubles go where the device's decode left the
                    // others', and are rounded and placed with them.
                    CheckedBrick::Cpu(y) => s
                        .memcpy_htod(y.as_slice(), &mut slot.y.slice_mut(bi * n..(bi + 1) * n))
                        .during(|| "copying a brick decoded on the CPU".into())?,
                    CheckedBrick::Device(fix) => {
                        for o in fix {
                            pos.push(field_at(bi, o.index));
                            steps.push(o.steps);
                            exact.push(o.exact as f32);
                        }
                    }
                }
            }
            // Unless the inverse placed them, or a brick was decoded on
            // the CPU: the decoded doubles rounded to float32 and placed in
            // the field in one pass (rounding into a float buffer first,
            // then placing, cost a write and a read of 4 bytes a value
            // more). A brick's values are the same either way.
            let at = at()?;
            let on_cpu = checked.iter().any(|c| matches!(c, CheckedBrick::Cpu(_)));
            if !fused || on_cpu {
                let d = dims.map(|v| v as i32);
                let scatter = slot.f("SCATTER(kernel)", 0)?;
                let mut l = s.launch_builder(&scatter);
                l.arg(&slot.y)
                    .arg(&org)
                    .arg(&yy)
                    .arg(&xx)
                    .arg(&d[0])
                    .arg(&d[1])
                    .arg(&d[2])
                    .arg(&at);
                unsafe { l.launch(cfg(block_grid(n, list.len()), 256, 0)) }
                    .during(|| "launching SCATTER".into())?;
            }
            // Then the outliers' corrections, in the field.
            if !pos.is_empty() {
                let pos_d = slot.stage.up(&slot.gpu, s, &pos)?;
                let steps_d = slot.stage.up(&slot.gpu, s, &steps)?;
                let exact_d = slot.stage.up(&slot.gpu, s, &exact)?;
                let count = pos.len() as i64;
                let outfix = slot.f("OUTFIX(kernel)", 0)?;
                let mut l = s.launch_builder(&outfix);
                l.arg(&at)
                    .arg(&pos_d)
                    .arg(&steps_d)
                    .arg(&exact_d)
                    .arg(&count)
                    .arg(&h.abs_bound);
                unsafe { l.launch(cfg((pos.len().div_ceil(256).min(65535) as u32, 1), 256, 0)) }
                    .during(|| "launching OUTFIX".into())?;
            }
            s.synchronize().during(|| "placing decoded bricks".into())?;
            trace("d_placed");
            prof(s, "d_place")?;
            placed(plan.group[i]);
            drop(turn);
            progress(done.fetch_add(list.len(), Ordering::Relaxed) + list.len());
            Ok(())
        },
    )
}
