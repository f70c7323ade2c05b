//! The front-ends for page-locked host fields (`PinnedField`): coded and
//! decoded across PCIe in pieces, copies overlapping the kernels.

use super::*;

/// Compresses a field in page-locked host memory on `gpus`; bytes equal
/// `compress`'s. The field is cut into slabs of whole brick layers, one a
/// GPU, and a slab into groups of layers: each GPU copies its groups up
/// with the copy engines (the link's full rate, no SM waiting on PCIe),
/// taking each group's range there, and codes its bricks from device
/// memory. Under an absolute bound a group is coded as soon as it has
/// arrived, while the next ones cross PCIe (no step depends on the range);
/// a relative or PSNR bound needs the whole field's range first. A slab
/// that does not fit in half the GPU's free memory stays on the host and
/// the kernels read it across PCIe.
pub fn compress_pinned(
    f: &PinnedField,
    opts: &CodecOptions,
    gpus: &[Arc<Gpu>],
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(GpuMrz, CodecStats, GpuRun), CudaError> {
    use cudarc::driver::DevicePtr;
    if gpus.is_empty() {
        return Err(CudaError::NoDevice("no GPU was given".into()));
    }
    if opts.transform == lifting::Lifting::Lorenzo {
        // The kernels read the mapped field across PCIe: no staging.
        let range = match f.range {
            Some((lo, hi, _)) if lo <= hi => (lo as f64, hi as f64),
            Some(_) => (0.0, 0.0),
            None => {
                return Err(CudaError::Unsupported(
                    "the fast profile needs the field's range taken as it was written".into(),
                ))
            }
        };
        let r = fast::compress_at(&gpus[0], f.device_at()?, f.info, opts, range);
        if let Ok((parts, _, _)) = &r {
            progress(parts.payloads.len());
        }
        return r;
    }
    super::gpu_codable(opts)?;
    let t_run = std::time::Instant::now();
    let grid = opts.grid(f.info.dims)?;
    let plane = f.info.dims[1] * f.info.dims[2];
    let parts = slabs(&grid, gpus.len());
    // The coding plan before the field is on the device: an absolute
    // bound needs no range; a relative or PSNR one needs the range the
    // host took as the field was written, where there is one. (The file's
    // header takes the devices' ranges below, as without it.)
    let early = match (opts.bound, f.range) {
        (_, Some((_, _, Some(index)))) => {
            return Err(codec::CodecError::NonFinite {
                index,
                value: f.as_slice()[index] as f64,
            }
            .into())
        }
        (codec::ErrorBound::Abs(_), _) => Some(codec::plan_range((0.0, 0.0), f.info.dims, opts)?),
        (_, Some((lo, hi, None))) if lo <= hi => Some(codec::plan_range(
            (lo as f64, hi as f64),
            f.info.dims,
            opts,
        )?),
        _ => None,
    };
    // Groups only where a batch can start before the slab is whole.
    let most = if early.is_some() {
        tuning().upload_groups
    } else {
        1
    };
    let groups: Vec<Vec<Piece>> = parts
        .iter()
        .map(|p| slab_pieces(&grid, (p.0, p.1), most, tuning().rows_up))
        .collect();
    let done = AtomicUsize::new(0);
    type Wait<'w> = &'w (dyn Fn(usize) -> Result<(), CudaError> + Sync);
    // One plan for the slab's bricks, as for a field on the device (a
    // plan a group of layers cost a round of the rANS chains a group:
    // twice the time); a batch waits for the group of its last brick
    // layer (the groups arrive in order).
    let code = |i: usize, g: &Arc<Gpu>, plan: &Planned, at: (u64, bool), wait: Wait| {
        if parts[i].2.is_empty() {
            return Ok(None);
        }
        let last_group = |b: &Batch| {
            b.bricks
                .iter()
                .filter_map(|&k| {
                    let start = plan.2.bounds(k).0;
                    groups[i].iter().position(|p| p.holds(start))
                })
                .max()
                .unwrap_or(0)
        };
        let fill = |slot: &mut Slot, b: &Batch| {
            wait(last_group(b))?;
            slot.gather_from(at, &f.info, &plan.2, b, opts.transform)
        };
        code_bricks(
            f.info,
            opts,
            (plan, &parts[i].2),
            std::slice::from_ref(g),
            (None, RESIDENT_BATCH, RESIDENT_SLOTS, RESIDENT_SHARES),
            (&done, progress),
            &fill,
        )
        .map(Some)
    };
    let mut staged = on_every_gpu(gpus, &|i, g| -> Result<Staged, CudaError> {
        let base = parts[i].0 * plane;
        let len = (parts[i].1 - parts[i].0) * plane;
        let host = &f.as_slice()[base..base + len];
        if len == 0 || !slab_fits(len, g)? {
            // GATHER and RANGE read the field across PCIe.
            let at = f.device_at()?;
            let r = match len {
                0 => (f32::INFINITY, f32::NEG_INFINITY, None),
                _ => range_at(g, &g.stream, at + 4 * base as u64, len)?,
            };
            let coded = match (&early, r.2) {
                (Some(p), None) => code(i, g, p, (at, false), &|_| Ok(()))?,
                _ => None,
            };
            return Ok(Staged {
                at,
                _dev: None,
                ranges: vec![Some(r)],
                coded,
            });
        }
        let mut dev = unsafe { g.stream.alloc::<f32>(len) }
            .during(|| "allocating a slab of the field".into())?;
        g.stream
            .synchronize()
            .during(|| "allocating a slab of the field".into())?;
        // GATHER addresses the whole field: the slab stands where its
        // first plane would be.
        let at = {
            let (at, _sync) = dev.device_ptr(&g.stream);
            at.wrapping_sub(4 * base as u64)
        };
        let pieces: Vec<(usize, Rows)> = groups[i]
            .iter()
            .map(|p| p.rows(f.info.dims, parts[i].0))
            .collect();
        let arrivals = Arrivals::new(pieces.len());
        let (up, coded) = std::thread::scope(|sc| {
            let up = sc.spawn(|| upload_groups(g, host, &mut dev, &pieces, &arrivals));
            let coded = match &early {
                Some(p) => code(i, g, p, (at, true), &|k| arrivals.wait(k)),
                None => Ok(None),
            };
            (up.join(), coded)
        });
        let up = up.map_err(|_| CudaError::Unsupported("a GPU thread panicked".into()))?;
        let ranges = arrivals.ranges();
        // A value that is not finite is the error, whatever stopped.
        if ranges.iter().flatten().any(|r| r.2.is_some()) {
            return Ok(Staged {
                at,
                _dev: None,
                ranges,
                coded: None,
            });
        }
        up?;
        Ok(Staged {
            at,
            _dev: Some(dev),
            ranges,
            coded: coded?,
        })
    })?;
    // Slabs are in field order (their pieces of rows are not): the first
    // bad value is the least index of the first slab that has one.
    for (i, st) in staged.iter().enumerate() {
        if let Some(j) = st.ranges.iter().flatten().filter_map(|r| r.2).min() {
            let index = parts[i].0 * plane + j;
            return Err(codec::CodecError::NonFinite {
                index,
                value: f.as_slice()[index] as f64,
            }
            .into());
        }
    }
    let (lo, hi) = staged
        .iter()
        .flat_map(|s| s.ranges.iter().flatten())
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), r| {
            (l.min(r.0), h.max(r.1))
        });
    let plan = codec::plan_range((lo as f64, hi as f64), f.info.dims, opts)?;
    let t_staged = std::time::Instant::now();
    prof_host("plan", t_run);
    trace_stages(
        "pinned plan",
        t_run,
        &[("staged", t_staged), ("planned", std::time::Instant::now())],
    );
    let coded: Vec<Option<Coded>> = match early {
        Some(_) => staged.iter_mut().map(|s| s.coded.take()).collect(),
        None => on_every_gpu(gpus, &|i, g| {
            let st = &staged[i];
            code(i, g, &plan, (st.at, st._dev.is_some()), &|_| Ok(()))
        })?,
    };
    drop(staged);
    assemble_slabs(f.info, opts, &plan, coded, gpus.len(), t_run)
}

/// Decodes a float32 .mrz on `gpus` into `out`, a field in page-locked
/// host memory of the file's shape; values equal `decompress`'s. Each GPU
/// decodes a slab of whole brick layers into its memory and copies it down
/// with the copy engines in groups of layers (`decode_groups`), each as
/// soon as its batches are placed, while the next ones decode (batches
/// kept in order by `InOrder`). A slab that does not fit in half the
/// GPU's free memory is written by the kernels across PCIe instead.
pub fn decompress_pinned(
    r: &mut codec::MrzReader,
    out: &mut PinnedField,
    gpus: &[Arc<Gpu>],
    progress: &(dyn Fn(usize) + Sync),
) -> Result<(), CudaError> {
    if gpus.is_empty() {
        return Err(CudaError::NoDevice("no GPU was given".into()));
    }
    // The kernels and copies below write the values: the range taken
    // when the field was made no longer holds.
    out.range = None;
    let h = float32_header(r, "decoding into page-locked memory", "use decompress")?;
    if (out.info.dims, out.info.ndim) != (h.dims, h.ndim) {
        return Err(CudaError::Unsupported(format!(
            "{}: a field of {:?}, but the output holds {:?}",
            r.path(),
            &h.dims[3 - h.ndim..],
            &out.info.dims[3 - out.info.ndim..]
        )));
    }
    if h.transform == lifting::Lifting::Lorenzo {
        let gpu = &gpus[0];
        let n = out.info.len();
        let mut y = gpu
            .stream
            .alloc_zeros::<f32>(n.max(1))
            .during(|| "allocating the decoded field".into())?;
        fast::decompress_into(r, gpu, &mut y)?;
        gpu.stream
            .memcpy_dtoh(&y.slice(0..n), &mut out.data[..n])
            .during(|| "copying the field to page-locked memory".into())?;
        gpu.stream
            .synchronize()
            .during(|| "copying the field to page-locked memory".into())?;
        progress(r.grid().len());
        return Ok(());
    }
    let grid = r.grid();
    let plane = h.dims[1] * h.dims[2];
    let parts = slabs(&grid, gpus.len());
    // The slabs first, so that the batches share what memory is left.
    let slab_mem = on_every_gpu(gpus, &|i, g| {
        let len = (parts[i].1 - parts[i].0) * plane;
        if len == 0 || !slab_fits(len, g)? {
            return Ok(None);
        }
        let d = unsafe { g.stream.alloc::<f32>(len) }
            .during(|| "allocating a slab of the field".into())?;
        g.stream
            .synchronize()
            .during(|| "allocating a slab of the field".into())?;
        Ok(Some(Mutex::new(d)))
    })?;
    // A piece (layers, or rows of one) a batch group where the slab is on
    // the device; the slab as one group where the kernels write the
    // host's memory.
    let spans: Vec<Vec<Piece>> = parts
        .iter()
        .zip(&slab_mem)
        .map(|(p, m)| match m {
            // Whole layers: pieces of rows made the decoder slower (1024^3
            // turbulent 1e-3 on an H100: 34-37 GB/s against 42-43),
            // since each piece is a batch group and its rANS round.
            Some(_) => slab_pieces(
                &grid,
                (p.0, p.1),
                tuning().decode_groups,
                tuning().rows_down,
            ),
            None => vec![Piece {
                z: (p.0, p.1),
                y: (0, h.dims[1]),
            }],
        })
        .collect();
    let mut plans = Vec::with_capacity(gpus.len());
    for ((g, part), zs) in gpus.iter().zip(&parts).zip(&spans) {
        plans.push(if part.2.is_empty() {
            None
        } else {
            let regions: Vec<codec::Region> =
                zs.iter().map(|pc| [pc.z, pc.y, (0, h.dims[2])]).collect();
            Some(payload_batches(
                r,
                &regions,
                std::slice::from_ref(g),
                (RESIDENT_BATCH, PINNED_DECODE_SLOTS, RESIDENT_SHARES),
                0,
            )?)
        });
    }
    let done = AtomicUsize::new(0);
    // Disjoint spans of the output, one a slab.
    let host = out.data.as_mut_ptr() as usize;
    let mut rest = out.as_mut_slice();
    let mut outs = Vec::with_capacity(parts.len());
    for (z0, z1, _) in &parts {
        let (span, tail) = std::mem::take(&mut rest).split_at_mut((z1 - z0) * plane);
        outs.push(Mutex::new(span));
        rest = tail;
    }
    let lock = || CudaError::Unsupported("a GPU thread panicked".into());
    on_every_gpu(gpus, &|i, g| {
        use cudarc::driver::DevicePtrMut;
        let Some(plan) = &plans[i] else {
            return Ok(());
        };
        let gpu = std::slice::from_ref(g);
        let Some(m) = &slab_mem[i] else {
            let mapped = crate::device::mapped_at(host as *mut std::ffi::c_void)?;
            // Across PCIe: SCATTER's whole rows, not the passes' strided
            // values.
            let at: Placement = (&|| Ok(mapped), &|_| (), None, false);
            return decode_plan(r, plan, gpu, at, (&done, progress));
        };
        let mut slab = m.lock().map_err(|_| lock())?;
        let at = {
            let (at, _sync) = slab.device_ptr_mut(&g.stream);
            at.wrapping_sub(4 * (parts[i].0 * plane) as u64)
        };
        let mut span = outs[i].lock().map_err(|_| lock())?;
        // Batches still to place, a group.
        let left: Vec<AtomicUsize> = (0..spans[i].len())
            .map(|k| AtomicUsize::new(plan.group.iter().filter(|&&q| q == k).count()))
            .collect();
        let waiting = left
            .iter()
            .filter(|l| l.load(Ordering::Relaxed) > 0)
            .count();
        let (tx, rx) = std::sync::mpsc::channel::<usize>();
        let (decoded, copied) = std::thread::scope(|sc| {
            let decoder = sc.spawn(|| {
                // The sender goes with this thread: however decoding ends,
                // the copying below stops waiting.
                let tx = tx;
                g.ctx.bind_to_thread().during(|| "binding the GPU".into())?;
                let placed = |k: usize| {
                    if left[k].fetch_sub(1, Ordering::AcqRel) == 1 {
                        let _ = tx.send(k);
                    }
                };
                let order = InOrder::new(plan.batches.len(), tuning().decode_ahead);
                let at: Placement = (&|| Ok(at), &placed, Some(&order), true);
                decode_plan(r, plan, gpu, at, (&done, progress))
            });
            let copied = (|| -> Result<(), CudaError> {
                let cs = g.ctx.new_stream().during(|| "creating a stream".into())?;
                for _ in 0..waiting {
                    let Ok(k) = rx.recv() else { break };
                    let (at, rows) = spans[i][k].rows(h.dims, parts[i].0);
                    copy_rows_down(&cs, &slab, &mut span[..], at, rows)?;
                }
                cs.synchronize()
                    .during(|| "copying decoded layers down".into())
            })();
            (decoder.join(), copied)
        });
        decoded.map_err(|_| lock())??;
        copied
    })?;
    print_profile("decompress_pinned");
    Ok(())
}
