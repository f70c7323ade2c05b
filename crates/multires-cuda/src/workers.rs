//! Threads kept from run to run for a GPU's codec slots. A run spawned
//! its slot threads afresh: on two H100s a two-GPU decode's batches took
//! their first step over 1.7-3.0 ms (23 threads spawned by two at once),
//! against 0.2 ms for one GPU's slab alone (the host traces).
//! Kept threads also keep their allocator heaps warm.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::{Condvar, Mutex};

type Job = Box<dyn FnOnce() + Send + 'static>;

/// An idle worker: the GPU (ordinal) it serves, and where its jobs go.
struct Worker {
    gpu: usize,
    jobs: mpsc::Sender<Job>,
}

static IDLE: Mutex<Vec<Worker>> = Mutex::new(Vec::new());

/// Why a job did not return: it panicked (with the panic's message), or
/// no thread could be started for it (the system's reason).
#[derive(Debug)]
pub enum JobError {
    Panicked(String),
    NoThread(String),
}

/// A panic's message, where it carries one.
pub fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    match p.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => p
            .downcast_ref::<&str>()
            .map_or_else(|| "no message".into(), |s| s.to_string()),
    }
}

/// An ordinal whose threads never start, in tests only.
#[cfg(test)]
const UNSPAWNABLE: usize = usize::MAX;

fn spawn_worker(gpu: usize) -> std::io::Result<Worker> {
    #[cfg(test)]
    if gpu == UNSPAWNABLE {
        return Err(std::io::Error::other("refused for the test"));
    }
    let (jobs, rx) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name(format!("multires gpu {gpu} slot"))
        .spawn(move || {
            while let Ok(job) = rx.recv() {
                job();
            }
        })?;
    Ok(Worker { gpu, jobs })
}

/// Jobs still running, and the condition their last one signals.
struct Latch {
    left: Mutex<usize>,
    done: Condvar,
}

impl Latch {
    fn count_down(&self) {
        let mut left = self.left.lock().unwrap_or_else(|e| e.into_inner());
        *left = left.saturating_sub(1);
        if *left == 0 {
            self.done.notify_all();
        }
    }

    fn wait(&self) {
        let mut left = self.left.lock().unwrap_or_else(|e| e.into_inner());
        while *left > 0 {
            left = self.done.wait(left).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Runs `work(g, k)` for every GPU index `g` of `gpus` (ordinals) and
/// `k` in `0..per`, each on a kept thread of its GPU, all at once, and
/// returns once every one has: results in that order, a panic as
/// `JobError::Panicked` (with its payload), a job no thread could be
/// started for as `JobError::NoThread`. Threads are made when too few are
/// idle, and serve later runs.
pub fn run_all<T: Send>(
    gpus: &[usize],
    per: usize,
    work: &(dyn Fn(usize, usize) -> T + Sync),
) -> Vec<Result<T, JobError>> {
    let n = gpus.len() * per;
    let results: Vec<Mutex<Option<Result<T, JobError>>>> =
        (0..n).map(|_| Mutex::new(None)).collect();
    let latch = Latch {
        left: Mutex::new(n),
        done: Condvar::new(),
    };
    let mut taken: Vec<Worker> = Vec::with_capacity(n);
    // Why a job's thread could not be started, by job.
    let mut no_thread: Vec<Option<String>> = vec![None; n];
    {
        let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
        for &gpu in gpus {
            for _ in 0..per {
                match idle.iter().position(|w| w.gpu == gpu) {
                    Some(i) => taken.push(idle.swap_remove(i)),
                    None => match spawn_worker(gpu) {
                        Ok(w) => taken.push(w),
                        // A worker whose jobs go nowhere: its send fails
                        // below, and the job's result says why.
                        Err(e) => {
                            no_thread[taken.len()] = Some(e.to_string());
                            taken.push(Worker {
                                gpu,
                                jobs: mpsc::channel().0,
                            });
                        }
                    },
                }
            }
        }
    }
    let mut sent_ok = vec![true; n];
    for (i, w) in taken.iter().enumerate() {
        let (g, k) = (i / per.max(1), i % per.max(1));
        let (results, latch) = (&results, &latch);
        let job = move || {
            let r = catch_unwind(AssertUnwindSafe(|| work(g, k)))
                .map_err(|p| JobError::Panicked(panic_message(p)));
            *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
            latch.count_down();
        };
        let job: Box<dyn FnOnce() + Send + '_> = Box::new(job);
        // SAFETY: the job borrows `work`, `results` and `latch`, all of
        // which outlive this call, and this call returns only after
        // `latch.wait()`, that is after every job sent has run to its end
        // (a panic in `work` is caught inside the job, so the count always
        // falls). A job that cannot be sent comes back in the error and is
        // dropped here, unrun, and counted down below.
        let job: Job = unsafe { std::mem::transmute::<Box<dyn FnOnce() + Send + '_>, Job>(job) };
        if let Err(back) = w.jobs.send(job) {
            drop(back);
            sent_ok[i] = false;
            latch.count_down();
        }
    }
    latch.wait();
    // Workers whose thread is gone (a send failed) are not kept.
    let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
    idle.extend(
        taken
            .into_iter()
            .zip(&sent_ok)
            .filter(|(_, &ok)| ok)
            .map(|(w, _)| w),
    );
    drop(idle);
    results
        .into_iter()
        .zip(no_thread)
        .map(|(r, why)| {
            r.into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .unwrap_or_else(|| {
                    Err(JobError::NoThread(
                        why.unwrap_or_else(|| "its kept thread had ended".into()),
                    ))
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Every job runs once, at once with the others (each waits for all
    /// to have started), borrowing the caller's data; results come in
    /// order, and a later run reuses the same threads.
    #[test]
    fn jobs_run_at_once_on_kept_threads_and_return_in_order() {
        // Ordinals no other test uses, so the idle threads are this test's.
        let gpus = [901, 902];
        let started = AtomicUsize::new(0);
        let data: Vec<usize> = (0..6).map(|i| 10 * i).collect();
        let ids = Mutex::new(Vec::new());
        let run = || {
            run_all(&gpus, 3, &|g, k| {
                started.fetch_add(1, Ordering::SeqCst);
                while !started.load(Ordering::SeqCst).is_multiple_of(6) {
                    std::thread::yield_now();
                }
                ids.lock().unwrap().push(std::thread::current().id());
                data[3 * g + k] + g
            })
        };
        let first: Vec<usize> = run().into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(first, vec![0, 10, 20, 31, 41, 51]);
        let mut a = std::mem::take(&mut *ids.lock().unwrap());
        run();
        let mut b = std::mem::take(&mut *ids.lock().unwrap());
        a.sort_by_key(|t| format!("{t:?}"));
        b.sort_by_key(|t| format!("{t:?}"));
        assert_eq!(a.len(), 6);
        assert_eq!(a, b, "the second run used other threads");
    }

    /// A job whose thread cannot be started is an error that says why,
    /// in its place, and the run returns.
    #[test]
    fn a_thread_that_cannot_start_is_its_jobs_error() {
        let out = run_all(&[UNSPAWNABLE], 2, &|_, k| k);
        assert_eq!(out.len(), 2);
        for r in out {
            match r {
                Err(JobError::NoThread(why)) => assert!(why.contains("refused"), "{why}"),
                other => panic!("{other:?}"),
            }
        }
    }

    /// A panicking job is an error in its place; the others finish, and
    /// its thread serves the next run.
    #[test]
    fn a_panic_is_its_jobs_error_and_the_threads_go_on() {
        let gpus = [903];
        let out = run_all(&gpus, 3, &|_, k| {
            if k == 1 {
                panic!("job {k}");
            }
            k
        });
        assert_eq!(out.len(), 3);
        assert_eq!(*out[0].as_ref().unwrap(), 0);
        match &out[1] {
            Err(JobError::Panicked(m)) => assert_eq!(m, "job 1"),
            other => panic!("{other:?}"),
        }
        assert_eq!(*out[2].as_ref().unwrap(), 2);
        let again: Vec<usize> = run_all(&gpus, 3, &|_, k| k)
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(again, vec![0, 1, 2]);
    }
}
