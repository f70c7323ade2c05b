//! Checks on the files a command names, made before any work starts: an
//! output must not be one of the inputs (writing it would destroy the
//! data being read), every output must have an extension its writer
//! makes, and its folder must exist, so that a run writes all its outputs
//! or none.
use anyhow::{bail, Result};
use std::path::{Path, PathBuf};

/// An output a command will write, what it is, and the extensions its
/// writer makes (lower case, without the dot).
pub struct Output<'a> {
    pub path: &'a Path,
    pub what: &'a str,
    pub extensions: &'a [&'a str],
}

impl<'a> Output<'a> {
    pub fn new(path: &'a Path, what: &'a str, extensions: &'a [&'a str]) -> Self {
        Output {
            path,
            what,
            extensions,
        }
    }
}

/// The path as the file system resolves it, also when the file does not
/// exist yet (its folder resolved, its name kept).
fn canonical(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match (parent.canonicalize(), p.file_name()) {
        (Ok(d), Some(name)) => d.join(name),
        _ => p.to_path_buf(),
    }
}

fn extension(p: &Path) -> String {
    p.extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Refuses outputs equal to an input or to each other, outputs with an
/// extension their writer does not make, and outputs into a folder that
/// does not exist.
pub fn check(inputs: &[&Path], outputs: &[Output]) -> Result<()> {
    let ins: Vec<(PathBuf, &Path)> = inputs.iter().map(|p| (canonical(p), *p)).collect();
    let mut seen: Vec<(PathBuf, &Output)> = Vec::new();
    for o in outputs {
        let ext = extension(o.path);
        if !o.extensions.iter().any(|e| *e == ext) {
            let want = o
                .extensions
                .iter()
                .map(|e| format!(".{e}"))
                .collect::<Vec<_>>()
                .join(" or ");
            bail!(
                "{} '{}': expected a {want} file name{}",
                o.what,
                o.path.display(),
                if ext.is_empty() {
                    String::new()
                } else {
                    format!(", not .{ext}")
                }
            );
        }
        let c = canonical(o.path);
        if let Some((_, given)) = ins.iter().find(|(i, _)| *i == c) {
            bail!(
                "{} '{}' is the input '{}': writing it would destroy the data being read; choose another name",
                o.what,
                o.path.display(),
                given.display()
            );
        }
        if let Some((_, other)) = seen.iter().find(|(s, _)| *s == c) {
            bail!(
                "{} and {} are both '{}': give each output its own name",
                other.what,
                o.what,
                o.path.display()
            );
        }
        if let Some(dir) = o.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.is_dir() {
                bail!(
                    "{} '{}': the folder '{}' does not exist",
                    o.what,
                    o.path.display(),
                    dir.display()
                );
            }
        }
        seen.push((c, o));
    }
    Ok(())
}

/// Tells the user what a reader assumed (`Signal::notes`).
pub fn say(notes: &[String]) {
    for n in notes {
        eprintln!("note: {n}");
    }
}

/// The file a `--wavelet user:F.npy` or `--amplitude-gain file:G.npy`
/// argument reads, if it names one.
pub fn file_of<'a>(spec: Option<&'a str>, prefix: &str) -> Option<&'a Path> {
    spec.and_then(|s| s.strip_prefix(prefix)).map(Path::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_equal_to_an_input_is_refused_by_its_canonical_path() {
        let d = tempfile::tempdir().unwrap();
        let x = d.path().join("x.npy");
        std::fs::write(&x, b"x").unwrap();
        let same = d.path().join(".").join("x.npy");
        let e = check(&[&x], &[Output::new(&same, "-o", &["npy"])]).unwrap_err();
        assert!(e.to_string().contains("would destroy"), "{e}");
        let other = d.path().join("y.npy");
        check(&[&x], &[Output::new(&other, "-o", &["npy"])]).unwrap();
    }

    #[test]
    fn wrong_extensions_missing_folders_and_twin_outputs_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let txt = d.path().join("x.txt");
        let e = check(&[], &[Output::new(&txt, "-o", &["npy"])]).unwrap_err();
        assert!(
            e.to_string()
                .contains("expected a .npy file name, not .txt"),
            "{e}"
        );
        let lost = d.path().join("no/such/p.png");
        let e = check(&[], &[Output::new(&lost, "--plot", &["png"])]).unwrap_err();
        assert!(e.to_string().contains("does not exist"), "{e}");
        let w = d.path().join("w.npy");
        let e = check(
            &[],
            &[
                Output::new(&w, "-o", &["npy"]),
                Output::new(&w, "--coi-out", &["npy"]),
            ],
        )
        .unwrap_err();
        assert!(e.to_string().contains("both"), "{e}");
    }
}
