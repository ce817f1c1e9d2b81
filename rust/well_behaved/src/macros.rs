//! `nif_init!` and `server_main!`: the Rust counterparts of `WB_JOB_NIF`,
//! `WB_NIF_INIT_WITH` and a server's `main`.

/// Makes the crate's NIF library: a job NIF per job (named as its key,
/// taking the job's `ARGC` arguments and three more; `[keep_args]` after
/// a job whose `Args` are `Copy`, so hold no view, makes its later calls
/// skip decoding them again), the runtime's
/// `runtime_stats/0` and `runtime_configure/4`, optional plain NIFs, and
/// the load, upgrade and unload callbacks.
///
/// ```text
/// well_behaved::nif_init! {
///     module: "Elixir.HashSort.Native",
///     jobs: { sha256: Sha256, sort_u32: SortU32, count: Count [keep_args] },
///     // optional, in this order:
///     nifs: { version/0 => version,       // fn(Env<'a>, &[Term<'a>]) -> Result<Term<'a>, Error<'a>>
///             read/1 => read [dirty_io] }, // on a dirty scheduler: [dirty_cpu] or [dirty_io]
///     load: on_load,                      // fn(Env, Term) -> bool: false refuses the load
///     unload: on_unload,                  // fn()
/// }
/// ```
///
/// The load hook runs before the runtime's load and the unload hook after
/// the runtime's unload (also when the runtime refuses a load the hook
/// accepted); a library with a load hook refuses an upgrade, as
/// `WB_NIF_INIT_WITH` does. A panic in a plain NIF raises
/// `{:wb_panic, name, message}`; in a hook, it refuses the load.
#[macro_export]
macro_rules! nif_init {
    (
        module: $module:literal,
        jobs: { $($job:ident : $ty:ty $([$keep:ident])?),+ $(,)? }
        $(, nifs: { $($fname:ident / $arity:literal => $f:path $([$dirty:ident])?),* $(,)? })?
        $(, load: $load:path)?
        $(, unload: $unload:path)?
        $(,)?
    ) => {
        #[doc(hidden)]
        #[allow(non_snake_case, non_upper_case_globals, unused_imports, dead_code)]
        pub mod __well_behaved {
            use super::*;

            pub mod jobs {
                $(
                    pub mod $job {
                        use super::super::super::*;
                        pub struct __WbJobName;
                        unsafe impl $crate::__private::JobName for __WbJobName {
                            const NAME: &'static str = concat!(stringify!($job), "\0");
                        }
                        pub static __WB_TYPE: $crate::JobType =
                            $crate::__job_type!($ty, __WbJobName $(, $keep)?);
                        pub unsafe extern "C" fn __wb_nif(
                            env: *mut $crate::__private::ErlNifEnv,
                            argc: ::std::os::raw::c_int,
                            argv: *const $crate::__private::ERL_NIF_TERM,
                        ) -> $crate::__private::ERL_NIF_TERM {
                            $crate::sys::wb_run(env, &__WB_TYPE.0, argc, argv)
                        }
                    }
                )+
            }

            pub mod nifs {
                $($(
                    pub mod $fname {
                        use super::super::super::*;
                        pub unsafe extern "C" fn __wb_nif(
                            env: *mut $crate::__private::ErlNifEnv,
                            argc: ::std::os::raw::c_int,
                            argv: *const $crate::__private::ERL_NIF_TERM,
                        ) -> $crate::__private::ERL_NIF_TERM {
                            $crate::__private::plain_nif(env, argc, argv, stringify!($fname), $f)
                        }
                    }
                )*)?
            }

            const COUNT: usize = 0 $(+ $crate::__private::one(stringify!($job)))+;

            pub static TYPES: $crate::__private::TypeList<{ COUNT + 1 }> =
                $crate::__private::TypeList([$(&jobs::$job::__WB_TYPE.0 as *const _,)+ ::std::ptr::null()]);

            const FUNC_COUNT: usize =
                COUNT + 2 $($(+ $crate::__private::one(stringify!($fname)))*)?;

            static FUNCS: $crate::__private::FuncTable<FUNC_COUNT> = $crate::__private::FuncTable([
                $(
                    $crate::__private::ErlNifFunc {
                        name: concat!(stringify!($job), "\0").as_ptr() as *const ::std::os::raw::c_char,
                        arity: (<$ty as $crate::Job>::ARGC + 3) as ::std::os::raw::c_uint,
                        fptr: jobs::$job::__wb_nif,
                        flags: 0,
                    },
                )+
                $($(
                    $crate::__private::ErlNifFunc {
                        name: concat!(stringify!($fname), "\0").as_ptr() as *const ::std::os::raw::c_char,
                        arity: $arity,
                        fptr: nifs::$fname::__wb_nif,
                        flags: $crate::__nif_flags!($($dirty)?),
                    },
                )*)?
                $crate::__private::ErlNifFunc {
                    name: "runtime_stats\0".as_ptr() as *const ::std::os::raw::c_char,
                    arity: 0,
                    fptr: $crate::sys::wb_runtime_stats,
                    flags: 0,
                },
                $crate::__private::ErlNifFunc {
                    name: "runtime_configure\0".as_ptr() as *const ::std::os::raw::c_char,
                    arity: 4,
                    fptr: $crate::sys::wb_runtime_configure,
                    flags: 0,
                },
            ]);

            fn load_hook() -> ::std::option::Option<$crate::__private::LoadHook> {
                let hook: ::std::option::Option<$crate::__private::LoadHook> = None;
                $(let hook: ::std::option::Option<$crate::__private::LoadHook> = Some($load);)?
                hook
            }

            fn unload_hook() -> ::std::option::Option<fn()> {
                let hook: ::std::option::Option<fn()> = None;
                $(let hook: ::std::option::Option<fn()> = Some($unload);)?
                hook
            }

            unsafe extern "C" fn load(
                env: *mut $crate::__private::ErlNifEnv,
                _priv: *mut *mut ::std::os::raw::c_void,
                info: $crate::__private::ERL_NIF_TERM,
            ) -> ::std::os::raw::c_int {
                $crate::__private::load(env, info, TYPES.0.as_ptr(), load_hook(), unload_hook())
            }

            unsafe extern "C" fn upgrade(
                env: *mut $crate::__private::ErlNifEnv,
                _priv: *mut *mut ::std::os::raw::c_void,
                _old: *mut *mut ::std::os::raw::c_void,
                info: $crate::__private::ERL_NIF_TERM,
            ) -> ::std::os::raw::c_int {
                $crate::__private::install_panic_hook();
                if load_hook().is_some() {
                    return 1;
                }
                $crate::sys::wb_runtime_upgrade(env, TYPES.0.as_ptr(), info)
            }

            unsafe extern "C" fn unload(env: *mut $crate::__private::ErlNifEnv, _priv: *mut ::std::os::raw::c_void) {
                let _ = env;
                $crate::__private::unload(unload_hook())
            }

            #[no_mangle]
            pub unsafe extern "C" fn nif_init() -> *mut ::std::os::raw::c_void {
                $crate::sys::wb_rs_nif_entry(
                    concat!($module, "\0").as_ptr() as *const ::std::os::raw::c_char,
                    FUNCS.0.as_ptr() as *mut $crate::__private::ErlNifFunc,
                    FUNC_COUNT as ::std::os::raw::c_int,
                    load,
                    upgrade,
                    unload,
                )
            }

            /// The main of the crate's server program (`server_main!`).
            pub fn server_main() -> i32 {
                $crate::__private::server_main(TYPES.0.as_ptr())
            }
        }
    };
}

/// The flags of a plain NIF: none, or `[dirty_cpu]` / `[dirty_io]`.
#[doc(hidden)]
#[macro_export]
macro_rules! __nif_flags {
    () => {
        0
    };
    (dirty_cpu) => {
        1
    };
    (dirty_io) => {
        2
    };
}

/// The job type of a `nif_init!` entry: arguments decoded at every call,
/// or kept from the first (`[keep_args]`, for `Copy` arguments).
#[doc(hidden)]
#[macro_export]
macro_rules! __job_type {
    ($ty:ty, $name:ty) => {
        $crate::JobType::new::<$ty, $name>()
    };
    ($ty:ty, $name:ty, keep_args) => {
        $crate::JobType::new_keeping_args::<$ty, $name>()
    };
}

/// The `main` of a server program of the crate's jobs, for
/// `schedule: :external`: a binary target of the crate (say
/// `src/bin/my_server.rs`) whose only line is
/// `well_behaved::server_main!(my_crate);`, naming the library crate (or
/// the module) where `nif_init!` stands.
#[macro_export]
macro_rules! server_main {
    ($($path:ident)::+) => {
        fn main() {
            ::std::process::exit($($path)::+::__well_behaved::server_main())
        }
    };
}
