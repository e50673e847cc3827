//! Which BLAS kernels run: pinned by default, so that every BLAS and LAPACK call gives the same
//! bits on every x86-64 CPU with AVX2 and FMA (Intel or AMD, with or without AVX-512).
//!
//! OpenBLAS chooses its kernels once, when the library loads, from the CPU — or from
//! OPENBLAS_CORETYPE — and kernels for different cores sum in different orders (Debian's 0.3.21
//! runs SkylakeX kernels on a Zen 4 and Haswell ones on a Zen 5). The choice is made before
//! `main` runs, so `dpca` pins it by re-executing itself once with OPENBLAS_CORETYPE=Haswell,
//! whose kernels every AVX2 CPU runs ([`reexec_env`]). MKL reads MKL_CBWR (its conditional bitwise
//! reproducibility mode) at its first call; the same re-execution sets MKL_CBWR=AVX2.
//!
//! A user's own OPENBLAS_CORETYPE (or MKL_CBWR) wins; DPCA_BLAS_PIN=off lets the library choose
//! for the CPU. run.json records the kernels in force as `blas_core`. Library users (tests,
//! benches) are not re-executed: they run whatever the environment chooses.

use anyhow::{bail, Result};

/// Set to `off` to let the BLAS choose its kernels for this CPU; `on` (the default) pins them.
pub const PIN_ENV: &str = "DPCA_BLAS_PIN";
/// OpenBLAS's kernel override, read when the library loads.
pub const CORETYPE_ENV: &str = "OPENBLAS_CORETYPE";
/// The pinned OpenBLAS core: its kernels need AVX2 and FMA, which every x86-64 CPU since 2013
/// has, and they are what OpenBLAS already runs on the AMD cores it does not know.
pub const PINNED_CORE: &str = "Haswell";
/// MKL's code-path pin and its value.
pub const MKL_ENV: &str = "MKL_CBWR";
const MKL_PINNED: &str = "AVX2";
/// OpenBLAS's thread count at load: one, as [`super::force_single_threaded_blas`] sets it again
/// later (clients run in parallel on rayon's threads; BLAS threads inside them would
/// oversubscribe the cores).
const THREADS_ENV: &str = "OPENBLAS_NUM_THREADS";

/// Whether `PIN_ENV`'s value asks for the pin (unset: yes); anything but on/off is an error.
fn pin_wanted(value: Option<&str>) -> Result<bool> {
    match value.map(str::trim) {
        None | Some("") | Some("on") => Ok(true),
        Some("off") => Ok(false),
        Some(other) => bail!("{PIN_ENV}={other:?}: expected on (the default) or off"),
    }
}

/// The variables to set before re-executing this process so that its BLAS kernels are pinned,
/// given a lookup of the current environment; None when nothing needs to change (already
/// pinned, the user's own setting, the pin switched off, or a CPU without AVX2 and FMA).
pub fn reexec_env(var: impl Fn(&str) -> Option<String>) -> Result<Option<Vec<(String, String)>>> {
    if !pin_wanted(var(PIN_ENV).as_deref())? || !crate::linalg::cpu_has_avx2_fma() {
        return Ok(None);
    }
    let (name, value) = if cfg!(feature = "mkl") {
        (MKL_ENV, MKL_PINNED)
    } else {
        (CORETYPE_ENV, PINNED_CORE)
    };
    if var(name).is_some() {
        return Ok(None);
    }
    let mut set = vec![(name.to_string(), value.to_string())];
    if !cfg!(feature = "mkl") && var(THREADS_ENV).is_none() {
        set.push((THREADS_ENV.to_string(), "1".to_string()));
    }
    Ok(Some(set))
}

/// Re-execute this process with the BLAS kernels pinned, unless they already are (see
/// [`reexec_env`]). Called first thing in `main`, before any thread starts; returns only when
/// no re-execution is needed, or with the reason it failed.
#[cfg(unix)]
pub fn pin_by_reexec() -> Result<()> {
    use anyhow::Context;
    use std::os::unix::process::CommandExt;
    let Some(set) = reexec_env(|k| std::env::var(k).ok())? else {
        return Ok(());
    };
    let exe =
        std::env::current_exe().context("pinning the BLAS kernels: no path to this program")?;
    let mut args = std::env::args_os();
    let mut cmd = std::process::Command::new(&exe);
    if let Some(arg0) = args.next() {
        cmd.arg0(arg0);
    }
    cmd.args(args).envs(set);
    // exec returns only on failure.
    let e = cmd.exec();
    Err(anyhow::Error::new(e).context(format!(
        "pinning the BLAS kernels: cannot re-execute {} (set {CORETYPE_ENV}={PINNED_CORE} \
         yourself, or {PIN_ENV}=off to let OpenBLAS choose)",
        exe.display()
    )))
}

#[cfg(not(unix))]
pub fn pin_by_reexec() -> Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(name, _)| *name == k)
                .map(|(_, v)| v.to_string())
        }
    }

    /// Unset: pin (where the CPU runs the pinned kernels), one BLAS thread; the user's own
    /// core type, or off, leaves the environment alone; a bad value is an error naming it.
    #[test]
    fn the_pin_is_the_default_and_the_users_setting_wins() {
        let runs = crate::linalg::cpu_has_avx2_fma();
        let got = reexec_env(env(&[])).unwrap();
        if cfg!(feature = "mkl") {
            assert_eq!(got.is_some(), runs);
        } else if runs {
            assert_eq!(
                got.unwrap(),
                vec![
                    (CORETYPE_ENV.into(), PINNED_CORE.into()),
                    (THREADS_ENV.into(), "1".into())
                ]
            );
        } else {
            assert!(got.is_none());
        }
        let user = if cfg!(feature = "mkl") {
            (MKL_ENV, "COMPATIBLE")
        } else {
            (CORETYPE_ENV, "SkylakeX")
        };
        assert!(reexec_env(env(&[user])).unwrap().is_none());
        assert!(reexec_env(env(&[(PIN_ENV, "off")])).unwrap().is_none());
        assert_eq!(reexec_env(env(&[(PIN_ENV, "on")])).unwrap().is_some(), runs);
        let e = reexec_env(env(&[(PIN_ENV, "haswell")]))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(PIN_ENV) && e.contains("\"haswell\"") && e.contains("on"),
            "{e}"
        );
    }
}
