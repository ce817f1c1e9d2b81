//! Jobs written in Rust, run by the WellBehaved runtime: a job written once
//! runs in every scheduling mode of the Erlang VM (`:normal`,
//! `:dirty_cpu`, `:yielding`, `:yielding_dirty`, `:threaded`, `:auto`)
//! and, built into a server program, out of the VM (`:external`), with
//! the runtime's time slicing, cancellation when the caller dies, learned
//! costs and memory accounting. The crate has no dependencies: it compiles
//! the SDK's C runtime (its build script) and declares the erl_nif calls it
//! makes.
//!
//! A job implements [`Job`]; [`nif_init!`] makes the NIF library of the
//! crate's jobs, and [`server_main!`] the server program of the same jobs.
//! The Elixir side is `use WellBehaved.NIF` and `WellBehaved.Job.call/4`;
//! the guide `guides/rust.md` walks through a whole project.
//!
//! A crate of jobs is a `cdylib` (and an `rlib`, for its server binary),
//! whose build script links the runtime built here into the library and
//! the server's sources into the binary:
//!
//! ```text
//! use std::env::var;
//!
//! fn main() {
//!     println!("cargo:rustc-link-arg-cdylib={}", var("DEP_WELL_BEHAVED_RUNTIME").unwrap());
//!     println!("cargo:rustc-link-arg-bins={}", var("DEP_WELL_BEHAVED_SERVER").unwrap());
//!     println!("cargo:rustc-link-arg-bins=-L{}", var("DEP_WELL_BEHAVED_EI_LIB_DIR").unwrap());
//!     println!("cargo:rustc-link-arg-bins=-lei");
//! }
//! ```
mod job;
mod macros;
pub mod sys;
mod term;

pub use job::{Job, JobType, Step};
pub use term::{ArgTerm, Bytes, Env, Error, OwnedBinary, Term};

/// Inside a step: true when the step's time is up (see `wb_slice_spent`
/// in `wb_runtime.h`), so a step whose units vary in cost can return
/// before its budget is spent. It reads the clock: call it every
/// microsecond of work or so.
pub fn slice_spent() -> bool {
    unsafe { sys::wb_slice_spent() }
}

/// The slice in force, in nanoseconds.
pub fn slice_ns() -> i64 {
    unsafe { sys::wb_slice_ns() }
}

/// Memory the library holds outside jobs, added to (`delta > 0`) or taken
/// from the runtime's `resident_bytes`.
pub fn resident_bytes(delta: i64) {
    unsafe { sys::wb_runtime_resident_bytes(delta) }
}

/// Drops `value` on a thread of the runtime's own rather than the calling
/// scheduler: for large memory a job or a resource lets go of (giving a
/// block back to the system costs about 0.1 ms per MiB).
pub fn drop_later<T: Send + 'static>(value: Box<T>) {
    unsafe extern "C" fn release<T>(arg: *mut std::os::raw::c_void) {
        let value = Box::from_raw(arg as *mut T);
        // a panicking drop leaks the rest rather than unwinding into C
        let _ = crate::job::catch(move || drop(value));
    }
    unsafe { sys::wb_release_later(release::<T>, Box::into_raw(value) as *mut _) }
}

#[doc(hidden)]
pub mod __private {
    use std::ffi::CString;
    use std::os::raw::{c_char, c_int};

    pub use crate::job::{install_panic_hook, JobName};
    pub use crate::sys::{ErlNifEnv, ErlNifFunc, WbJobType, ERL_NIF_TERM};
    use crate::{Env, Error, Term};

    /// A NULL-terminated list of job types.
    #[repr(transparent)]
    pub struct TypeList<const N: usize>(pub [*const WbJobType; N]);
    unsafe impl<const N: usize> Sync for TypeList<N> {}

    /// The library's function table.
    #[repr(transparent)]
    pub struct FuncTable<const N: usize>(pub [ErlNifFunc; N]);
    unsafe impl<const N: usize> Sync for FuncTable<N> {}

    pub const fn one(_: &str) -> usize {
        1
    }

    pub type LoadHook = for<'a> fn(Env<'a>, Term<'a>) -> bool;

    fn catch<T>(f: impl FnOnce() -> T) -> Option<T> {
        crate::job::catch(f).ok()
    }

    /// The load callback: the hook, then the runtime's load (whose refusal
    /// unloads the hook's work).
    pub unsafe fn load(
        env: *mut ErlNifEnv,
        info: ERL_NIF_TERM,
        types: *const *const WbJobType,
        hook: Option<LoadHook>,
        unload_hook: Option<fn()>,
    ) -> c_int {
        crate::job::install_panic_hook();
        if let Some(hook) = hook {
            crate::term::new_call();
            let e = Env::from_raw(env);
            if catch(|| hook(e, Term::from_raw(e, info))) != Some(true) {
                return 1;
            }
        }
        let refused = crate::sys::wb_runtime_load(env, types, info);
        if refused != 0 {
            if let Some(unload) = unload_hook {
                catch(unload);
            }
        }
        refused
    }

    /// The unload callback: the runtime's, then the hook.
    pub unsafe fn unload(hook: Option<fn()>) {
        crate::sys::wb_runtime_unload();
        if let Some(hook) = hook {
            catch(hook);
        }
    }

    /// A NIF of the library's own, its panics raised as exceptions.
    pub unsafe fn plain_nif(
        env: *mut ErlNifEnv,
        argc: c_int,
        argv: *const ERL_NIF_TERM,
        name: &str,
        f: for<'a> fn(Env<'a>, &[Term<'a>]) -> Result<Term<'a>, Error<'a>>,
    ) -> ERL_NIF_TERM {
        crate::term::new_call();
        let e = Env::from_raw(env);
        let terms: Vec<Term<'_>> = (0..argc.max(0) as usize)
            .map(|i| Term::from_raw(e, *argv.add(i)))
            .collect();
        match crate::job::catch(|| f(e, &terms).map(|t| t.as_raw())) {
            Ok(Ok(t)) => t,
            Ok(Err(err)) => err.raise(e),
            Err(text) => crate::job::raise_panic_named(e, name, &text),
        }
    }

    pub fn server_main(types: *const *const WbJobType) -> i32 {
        crate::job::install_panic_hook();
        let args: Vec<CString> = std::env::args_os()
            .map(|a| {
                use std::os::unix::ffi::OsStrExt;
                CString::new(a.as_bytes()).unwrap_or_default()
            })
            .collect();
        let mut argv: Vec<*mut c_char> = args.iter().map(|a| a.as_ptr() as *mut c_char).collect();
        argv.push(std::ptr::null_mut());
        unsafe { crate::sys::wb_external_main(args.len() as c_int, argv.as_mut_ptr(), types) }
    }
}

#[cfg(test)]
mod tests;
