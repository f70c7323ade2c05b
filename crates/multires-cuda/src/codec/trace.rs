//! Diagnostics: MULTIRES_CODEC_PROFILE times each phase of a slot on the
//! device (one slot a GPU), MULTIRES_CODEC_TRACE prints when each slot's
//! host thread passed each mark.

use super::*;

thread_local! {
    /// When this thread's last `prof` phase ended; cleared when a slot
    /// thread starts a run, since kept threads idle between runs.
    pub(super) static PROF_LAST: std::cell::Cell<Option<std::time::Instant>> = const { std::cell::Cell::new(None) };
}

/// Whether MULTIRES_CODEC_PROFILE asks for the time of each phase of the
/// GPU codec (printed after a run; one slot a GPU then).
pub(super) fn profiling() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("MULTIRES_CODEC_PROFILE").is_some())
}

/// While profiling, the time since the last mark (after
/// synchronizing the stream) is added to `phase`; printed by `compress`.
pub(super) fn prof(s: &CudaStream, phase: &'static str) -> Result<(), CudaError> {
    trace(phase);
    if !profiling() {
        return Ok(());
    }
    s.synchronize().during(|| "profiling".into())?;
    let now = std::time::Instant::now();
    let last = PROF_LAST.with(|l| l.replace(Some(now)));
    if let Some(t) = last {
        if let Ok(mut m) = PROFILE.lock() {
            *m.entry(phase).or_insert(0.0) += (now - t).as_secs_f64();
        }
    }
    Ok(())
}

/// With MULTIRES_CODEC_TRACE set, when each slot's host thread passed
/// each mark (no synchronization added), printed per batch by `run_slots`:
/// a timeline of how the batches overlap.
pub(super) static TRACE: Mutex<Vec<(usize, usize, &'static str, std::time::Instant)>> =
    Mutex::new(Vec::new());
thread_local!(pub(super) static TRACE_BATCH: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) });
// The GPU (ordinal) of a slot's thread, so that the traces of GPUs
// running at once stay apart.
thread_local!(pub(super) static TRACE_GPU: std::cell::Cell<usize> = const { std::cell::Cell::new(usize::MAX) });
// Slots of its GPU in the run of a slot's thread (`verify_payloads`).
thread_local!(pub(super) static SLOTS_A_GPU: std::cell::Cell<usize> = const { std::cell::Cell::new(0) });
/// Slots a GPU from which a decode's batches verify their own checksums.
pub(super) const MANY_SLOTS: usize = 4;

/// The instant every trace line counts from, so that lines of GPUs and
/// stages running at once line up.
pub(super) fn trace_epoch() -> std::time::Instant {
    static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(std::time::Instant::now)
}

/// Milliseconds from the trace's epoch to `t`.
pub(super) fn trace_ms(t: std::time::Instant) -> f64 {
    t.saturating_duration_since(trace_epoch()).as_secs_f64() * 1e3
}

pub(super) fn tracing() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| {
        trace_epoch();
        std::env::var_os("MULTIRES_CODEC_TRACE").is_some()
    })
}

pub(super) fn trace(mark: &'static str) {
    if tracing() {
        let b = TRACE_BATCH.with(|c| c.get());
        let g = TRACE_GPU.with(|c| c.get());
        if let Ok(mut t) = TRACE.lock() {
            t.push((g, b, mark, std::time::Instant::now()));
        }
    }
}

/// Prints the marks of `trace` on `gpus` (ordinals), a line per batch in
/// milliseconds from the trace's epoch, and clears them (other GPUs'
/// marks stay for their run).
pub(super) fn print_trace(caps: &[usize], gpus: &[usize]) {
    if !tracing() {
        return;
    }
    if let Ok(mut t) = TRACE.lock() {
        let (marks, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut *t)
            .into_iter()
            .partition(|m| gpus.contains(&m.0));
        *t = rest;
        for (i, cap) in caps.iter().enumerate() {
            let line: Vec<String> = marks
                .iter()
                .filter(|m| m.1 == i)
                .map(|m| format!("{}@{:.1}", m.2, trace_ms(m.3)))
                .collect();
            eprintln!(
                "trace gpu {gpus:?} batch {i} ({cap} values): {}",
                line.join(" ")
            );
        }
    }
}

/// With MULTIRES_CODEC_TRACE, the host stages of a run outside its
/// batches (milliseconds since the run began).
pub(super) fn trace_stages(
    what: &str,
    t0: std::time::Instant,
    marks: &[(&str, std::time::Instant)],
) {
    if tracing() {
        let line: Vec<String> = std::iter::once(("began", &t0))
            .chain(marks.iter().map(|(m, t)| (*m, t)))
            .map(|(m, t)| format!("{m}@{:.1}", trace_ms(*t)))
            .collect();
        eprintln!("trace {what}: {}", line.join(" "));
    }
}

/// Named instants of a run's host stages, marked from any of its threads
/// (only with MULTIRES_CODEC_TRACE) and printed in time order by
/// `trace_stages`.
#[derive(Default)]
pub(super) struct StageMarks(pub(super) Mutex<Vec<(&'static str, std::time::Instant)>>);

impl StageMarks {
    pub(super) fn mark(&self, m: &'static str) {
        if tracing() {
            if let Ok(mut v) = self.0.lock() {
                v.push((m, std::time::Instant::now()));
            }
        }
    }

    /// Marks gathered elsewhere (`take_head_marks`) join these.
    pub(super) fn extend(&self, marks: Vec<(&'static str, std::time::Instant)>) {
        if let Ok(mut v) = self.0.lock() {
            v.extend(marks);
        }
    }

    pub(super) fn trace(self, what: &str, t0: std::time::Instant) {
        let mut marks = self.0.into_inner().unwrap_or_default();
        marks.sort_by_key(|m| m.1);
        trace_stages(what, t0, &marks);
    }
}

/// Marks of a run's steps between its plan and its first batch, from any
/// thread (only with MULTIRES_CODEC_TRACE); `compress_slabs` prints them.
pub(super) static HEAD_MARKS: StageMarks = StageMarks(Mutex::new(Vec::new()));

pub(super) fn head_mark(m: &'static str) {
    HEAD_MARKS.mark(m);
}

/// The head marks since the last call: taken at a run's start (dropping
/// those of runs that print none, e.g. decodes) and after its batches.
pub(super) fn take_head_marks() -> Vec<(&'static str, std::time::Instant)> {
    HEAD_MARKS
        .0
        .lock()
        .map(|mut h| std::mem::take(&mut *h))
        .unwrap_or_default()
}

/// Adds the host time since `t0` to `phase` (while profiling).
pub(super) fn prof_host(phase: &'static str, t0: std::time::Instant) {
    if profiling() {
        if let Ok(mut m) = PROFILE.lock() {
            *m.entry(phase).or_insert(0.0) += t0.elapsed().as_secs_f64();
        }
    }
}

/// Prints and clears the phases gathered by `prof` and `prof_host`.
pub(super) fn print_profile(what: &str) {
    if let Ok(mut m) = PROFILE.lock() {
        if !m.is_empty() {
            let m = std::mem::take(&mut *m);
            eprintln!("codec profile of {what} (s, summed over slots): {m:?}");
        }
    }
}

pub(super) static PROFILE: Mutex<BTreeMap<&'static str, f64>> = Mutex::new(BTreeMap::new());
