//! MPI-IO on one file shared by the ranks of a communicator (rsmpi has
//! no MPI-IO layer: the few calls through its raw bindings).

use crate::MpiError;
use mpi::ffi;
use mpi::traits::*;
use std::ffi::CString;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// One MPI_File per call of `MPI_File_write_at_all` holds at most this
/// many bytes (its count is a C int).
const MAX_PIECE: usize = 1 << 30;

/// A file opened by every rank of a communicator.
pub struct MpiFile {
    fh: ffi::MPI_File,
    path: String,
}

// SAFETY: an MPI_File handle is a pointer the MPI library owns; each use
// here is a call made by the thread that holds the MpiFile (the process
// runs MPI at its default thread level, one thread calling MPI).
unsafe impl Send for MpiFile {}

fn check(rc: i32, path: &str, what: &str) -> Result<(), MpiError> {
    if rc == 0 {
        Ok(())
    } else {
        Err(MpiError::Io {
            path: path.to_string(),
            what: what.to_string(),
            code: rc,
        })
    }
}

fn c_path(path: &Path) -> Result<CString, MpiError> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| MpiError::Invalid(format!("{}: a path with a NUL byte", path.display())))
}

impl MpiFile {
    /// Creates (or empties) `path` for writing, on every rank of `world` (collective).
    pub fn create<C: Communicator>(world: &C, path: &Path) -> Result<Self, MpiError> {
        let name = path.display().to_string();
        let c = c_path(path)?;
        let mut fh = std::mem::MaybeUninit::<ffi::MPI_File>::uninit();
        let mode = (ffi::MPI_MODE_CREATE | ffi::MPI_MODE_WRONLY) as i32;
        // SAFETY: a valid communicator, a NUL-terminated path, and an out
        // pointer MPI fills before it returns success.
        let rc = unsafe {
            ffi::MPI_File_open(
                world.as_raw(),
                c.as_ptr(),
                mode,
                ffi::RSMPI_INFO_NULL,
                fh.as_mut_ptr(),
            )
        };
        check(rc, &name, "opening for writing")?;
        // SAFETY: MPI_File_open succeeded, so it wrote the handle.
        let f = MpiFile {
            fh: unsafe { fh.assume_init() },
            path: name,
        };
        // SAFETY: an open file handle (collective: every rank calls it).
        let rc = unsafe { ffi::MPI_File_set_size(f.fh, 0) };
        check(rc, &f.path, "emptying")?;
        Ok(f)
    }

    /// Opens `path` for reading on every rank of `world` (collective).
    pub fn open<C: Communicator>(world: &C, path: &Path) -> Result<Self, MpiError> {
        let name = path.display().to_string();
        let c = c_path(path)?;
        let mut fh = std::mem::MaybeUninit::<ffi::MPI_File>::uninit();
        // SAFETY: as in `create`.
        let rc = unsafe {
            ffi::MPI_File_open(
                world.as_raw(),
                c.as_ptr(),
                ffi::MPI_MODE_RDONLY as i32,
                ffi::RSMPI_INFO_NULL,
                fh.as_mut_ptr(),
            )
        };
        check(rc, &name, "opening for reading")?;
        Ok(MpiFile {
            // SAFETY: MPI_File_open succeeded.
            fh: unsafe { fh.assume_init() },
            path: name,
        })
    }

    /// Writes each (offset, bytes) of `pieces` with collective calls that
    /// every rank of `world` makes the same number of times (ranks with
    /// fewer pieces write nothing in the last rounds). The first error is
    /// returned after every round is made, so no rank is left waiting.
    pub fn write_all_at<C: Communicator>(
        &self,
        world: &C,
        pieces: &[(u64, &[u8])],
    ) -> Result<(), MpiError> {
        let mut list: Vec<(u64, &[u8])> = Vec::new();
        for &(at, bytes) in pieces {
            for (i, c) in bytes.chunks(MAX_PIECE).enumerate() {
                list.push((at + (i * MAX_PIECE) as u64, c));
            }
        }
        let mut rounds = 0u64;
        world.all_reduce_into(
            &(list.len() as u64),
            &mut rounds,
            mpi::collective::SystemOperation::max(),
        );
        let mut first = Ok(());
        for r in 0..rounds as usize {
            let (at, buf) = list.get(r).copied().unwrap_or((0, &[]));
            let mut status = std::mem::MaybeUninit::<ffi::MPI_Status>::uninit();
            // SAFETY: an open handle, a buffer of `buf.len()` bytes (at
            // most MAX_PIECE, so the count fits), MPI's byte type.
            let rc = unsafe {
                ffi::MPI_File_write_at_all(
                    self.fh,
                    at as ffi::MPI_Offset,
                    buf.as_ptr().cast(),
                    buf.len() as i32,
                    ffi::RSMPI_UINT8_T,
                    status.as_mut_ptr(),
                )
            };
            if first.is_ok() {
                first = check(
                    rc,
                    &self.path,
                    &format!("writing {} bytes at {at}", buf.len()),
                );
            }
        }
        first
    }

    /// Reads `buf.len()` bytes at `at` (independent: this rank only).
    pub fn read_at(&self, at: u64, buf: &mut [u8]) -> Result<(), MpiError> {
        for (i, c) in buf.chunks_mut(MAX_PIECE).enumerate() {
            let mut status = std::mem::MaybeUninit::<ffi::MPI_Status>::uninit();
            let off = at + (i * MAX_PIECE) as u64;
            // SAFETY: an open handle and a writable buffer of c.len() bytes.
            let rc = unsafe {
                ffi::MPI_File_read_at(
                    self.fh,
                    off as ffi::MPI_Offset,
                    c.as_mut_ptr().cast(),
                    c.len() as i32,
                    ffi::RSMPI_UINT8_T,
                    status.as_mut_ptr(),
                )
            };
            check(
                rc,
                &self.path,
                &format!("reading {} bytes at {off}", c.len()),
            )?;
            let mut got = 0i32;
            // SAFETY: the status MPI_File_read_at filled.
            unsafe { ffi::MPI_Get_count(status.as_ptr(), ffi::RSMPI_UINT8_T, &mut got) };
            if got as usize != c.len() {
                return Err(MpiError::Invalid(format!(
                    "{}: {} bytes at {off} asked, {got} read (the file is shorter)",
                    self.path,
                    c.len()
                )));
            }
        }
        Ok(())
    }

    /// The file's length in bytes.
    pub fn len(&self) -> Result<u64, MpiError> {
        let mut n: ffi::MPI_Offset = 0;
        // SAFETY: an open handle and an out pointer.
        let rc = unsafe { ffi::MPI_File_get_size(self.fh, &mut n) };
        check(rc, &self.path, "taking the size")?;
        Ok(n as u64)
    }

    pub fn is_empty(&self) -> Result<bool, MpiError> {
        Ok(self.len()? == 0)
    }

    /// Closes the file (collective).
    pub fn close(mut self) -> Result<(), MpiError> {
        // SAFETY: an open handle, closed once (drop is skipped below).
        let rc = unsafe { ffi::MPI_File_close(&mut self.fh) };
        let path = std::mem::take(&mut self.path);
        std::mem::forget(self);
        check(rc, &path, "closing")
    }

    /// A reader of the file for [`multires::codec::MrzReader::from_reader`]:
    /// this rank's reads only (independent MPI-IO).
    pub fn reader(self) -> Result<MpiReader, MpiError> {
        let len = self.len()?;
        Ok(MpiReader {
            f: self,
            at: 0,
            len,
        })
    }
}

/// An [`MpiFile`] as `Read + Seek`, for the .mrz reader: each read is
/// `MPI_File_read_at` at the position.
pub struct MpiReader {
    f: MpiFile,
    at: u64,
    len: u64,
}

impl Read for MpiReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = (buf.len() as u64).min(self.len.saturating_sub(self.at)) as usize;
        self.f
            .read_at(self.at, &mut buf[..n])
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        self.at += n as u64;
        Ok(n)
    }
}

impl Seek for MpiReader {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        let to = match pos {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.len.checked_add_signed(d),
            SeekFrom::Current(d) => self.at.checked_add_signed(d),
        };
        self.at = to.ok_or_else(|| std::io::Error::other("seek before the file's start"))?;
        Ok(self.at)
    }
}
