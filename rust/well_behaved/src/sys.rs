//! The C interface: the erl_nif functions the crate calls and the SDK's
//! runtime (`wb_runtime.h`), declared by hand (the crate has no
//! dependencies). Everything here is `unsafe` to call; the rest of the
//! crate wraps it. The VM exports these functions to a NIF library; a
//! server program (`schedule: :external`) links the SDK's subset of them,
//! which has no maps.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_double, c_int, c_long, c_uint, c_ulong, c_void};

/// A term: a machine word (`ERL_NIF_TERM`).
pub type ERL_NIF_TERM = usize;

const _: () = assert!(std::mem::size_of::<ERL_NIF_TERM>() == std::mem::size_of::<*const u8>());

/// `ErlNifEnv`, only ever behind a pointer.
#[repr(C)]
pub struct ErlNifEnv {
    _private: [u8; 0],
}

/// A NIF's C signature.
pub type NifFn = unsafe extern "C" fn(
    env: *mut ErlNifEnv,
    argc: c_int,
    argv: *const ERL_NIF_TERM,
) -> ERL_NIF_TERM;

/// An entry of the library's function table (`ErlNifFunc`).
#[repr(C)]
pub struct ErlNifFunc {
    pub name: *const c_char,
    pub arity: c_uint,
    pub fptr: NifFn,
    pub flags: c_uint,
}

/// `ErlNifBinary`: a binary's bytes, inspected or allocated.
#[repr(C)]
pub struct ErlNifBinary {
    pub size: usize,
    pub data: *mut u8,
    ref_bin: *mut c_void,
    _spare: [*mut c_void; 2],
}

impl ErlNifBinary {
    /// An empty binary for the VM to fill.
    pub const fn zeroed() -> Self {
        ErlNifBinary {
            size: 0,
            data: std::ptr::null_mut(),
            ref_bin: std::ptr::null_mut(),
            _spare: [std::ptr::null_mut(); 2],
        }
    }
}

/// `ERL_NIF_LATIN1`: the only atom and string encoding of OTP 25.
pub const ERL_NIF_LATIN1: c_int = 1;

pub type LoadFn = unsafe extern "C" fn(*mut ErlNifEnv, *mut *mut c_void, ERL_NIF_TERM) -> c_int;
pub type UpgradeFn =
    unsafe extern "C" fn(*mut ErlNifEnv, *mut *mut c_void, *mut *mut c_void, ERL_NIF_TERM) -> c_int;
pub type UnloadFn = unsafe extern "C" fn(*mut ErlNifEnv, *mut c_void);

/// `wb_job_type` (`wb_runtime.h`): a job's callbacks.
#[repr(C)]
pub struct WbJobType {
    pub name: *const c_char,
    pub argc: c_int,
    pub args_size: usize,
    pub state_size: usize,
    pub decode:
        Option<unsafe extern "C" fn(*mut ErlNifEnv, *const ERL_NIF_TERM, *mut c_void) -> bool>,
    pub predict: Option<unsafe extern "C" fn(*const c_void) -> u64>,
    pub setup: Option<unsafe extern "C" fn(*const c_void) -> u64>,
    pub init: Option<
        unsafe extern "C" fn(*mut ErlNifEnv, *const c_void, *mut c_void, *mut ERL_NIF_TERM) -> bool,
    >,
    pub bind: Option<unsafe extern "C" fn(*const c_void, *mut c_void)>,
    pub step: Option<unsafe extern "C" fn(*mut c_void, u64, *mut u64) -> bool>,
    pub result: Option<unsafe extern "C" fn(*mut ErlNifEnv, *const c_void) -> ERL_NIF_TERM>,
    pub memory: Option<unsafe extern "C" fn(*const c_void) -> usize>,
    pub destroy: Option<unsafe extern "C" fn(*mut c_void)>,
    pub ps_per_unit: u64,
    pub take_result: Option<unsafe extern "C" fn(*mut ErlNifEnv, *mut c_void) -> ERL_NIF_TERM>,
}

/// `WB_MAX_JOB_ARGS`: a job's own arguments, at most.
pub const WB_MAX_JOB_ARGS: usize = 8;
/// `WB_MAX_ARGS_SIZE`: bytes of a job's decoded arguments, at most.
pub const WB_MAX_ARGS_SIZE: usize = 256;
/// `WB_SDK_VERSION_STRING`, checked against the header by the build script.
pub const WB_SDK_VERSION_STRING: &str = "0.2.0";

extern "C" {
    // the runtime (wb_runtime.h)
    pub fn wb_runtime_load(
        env: *mut ErlNifEnv,
        types: *const *const WbJobType,
        info: ERL_NIF_TERM,
    ) -> c_int;
    pub fn wb_runtime_upgrade(
        env: *mut ErlNifEnv,
        types: *const *const WbJobType,
        info: ERL_NIF_TERM,
    ) -> c_int;
    pub fn wb_runtime_unload();
    pub fn wb_run(
        env: *mut ErlNifEnv,
        ty: *const WbJobType,
        argc: c_int,
        argv: *const ERL_NIF_TERM,
    ) -> ERL_NIF_TERM;
    pub fn wb_runtime_stats(
        env: *mut ErlNifEnv,
        argc: c_int,
        argv: *const ERL_NIF_TERM,
    ) -> ERL_NIF_TERM;
    pub fn wb_runtime_configure(
        env: *mut ErlNifEnv,
        argc: c_int,
        argv: *const ERL_NIF_TERM,
    ) -> ERL_NIF_TERM;
    pub fn wb_slice_spent() -> bool;
    pub fn wb_slice_ns() -> i64;
    pub fn wb_runtime_resident_bytes(delta: i64);
    pub fn wb_release_later(release: unsafe extern "C" fn(*mut c_void), arg: *mut c_void);
    pub fn wb_make_malloc_binary(
        env: *mut ErlNifEnv,
        block: *mut c_void,
        size: usize,
    ) -> ERL_NIF_TERM;
    pub fn wb_reject(reason: ERL_NIF_TERM) -> bool;
    pub fn wb_external_main(
        argc: c_int,
        argv: *mut *mut c_char,
        types: *const *const WbJobType,
    ) -> c_int;

    // the entry the VM reads (c/entry.c, compiled against erl_nif.h)
    pub fn wb_rs_nif_entry(
        module: *const c_char,
        funcs: *mut ErlNifFunc,
        count: c_int,
        load: LoadFn,
        upgrade: UpgradeFn,
        unload: UnloadFn,
    ) -> *mut c_void;

    // erl_nif: exceptions
    pub fn enif_make_badarg(env: *mut ErlNifEnv) -> ERL_NIF_TERM;
    pub fn enif_raise_exception(env: *mut ErlNifEnv, reason: ERL_NIF_TERM) -> ERL_NIF_TERM;

    // atoms
    pub fn enif_make_atom_len(env: *mut ErlNifEnv, name: *const c_char, len: usize)
        -> ERL_NIF_TERM;
    pub fn enif_get_atom_length(
        env: *mut ErlNifEnv,
        t: ERL_NIF_TERM,
        len: *mut c_uint,
        enc: c_int,
    ) -> c_int;
    pub fn enif_get_atom(
        env: *mut ErlNifEnv,
        t: ERL_NIF_TERM,
        buf: *mut c_char,
        size: c_uint,
        enc: c_int,
    ) -> c_int;
    pub fn enif_is_atom(env: *mut ErlNifEnv, t: ERL_NIF_TERM) -> c_int;
    pub fn enif_is_identical(a: ERL_NIF_TERM, b: ERL_NIF_TERM) -> c_int;

    // numbers: on LP64 the header maps the 64-bit calls to the long ones,
    // which are what the VM exports
    #[link_name = "enif_get_long"]
    pub fn enif_get_int64(env: *mut ErlNifEnv, t: ERL_NIF_TERM, out: *mut i64) -> c_int;
    #[link_name = "enif_get_ulong"]
    pub fn enif_get_uint64(env: *mut ErlNifEnv, t: ERL_NIF_TERM, out: *mut u64) -> c_int;
    #[link_name = "enif_make_long"]
    pub fn enif_make_int64(env: *mut ErlNifEnv, v: i64) -> ERL_NIF_TERM;
    #[link_name = "enif_make_ulong"]
    pub fn enif_make_uint64(env: *mut ErlNifEnv, v: u64) -> ERL_NIF_TERM;
    pub fn enif_get_double(env: *mut ErlNifEnv, t: ERL_NIF_TERM, out: *mut c_double) -> c_int;
    pub fn enif_make_double(env: *mut ErlNifEnv, v: c_double) -> ERL_NIF_TERM;

    // binaries
    pub fn enif_inspect_binary(
        env: *mut ErlNifEnv,
        t: ERL_NIF_TERM,
        bin: *mut ErlNifBinary,
    ) -> c_int;
    pub fn enif_inspect_iolist_as_binary(
        env: *mut ErlNifEnv,
        t: ERL_NIF_TERM,
        bin: *mut ErlNifBinary,
    ) -> c_int;
    pub fn enif_alloc_binary(size: usize, bin: *mut ErlNifBinary) -> c_int;
    pub fn enif_release_binary(bin: *mut ErlNifBinary);
    pub fn enif_make_binary(env: *mut ErlNifEnv, bin: *mut ErlNifBinary) -> ERL_NIF_TERM;
    pub fn enif_make_new_binary(
        env: *mut ErlNifEnv,
        size: usize,
        term: *mut ERL_NIF_TERM,
    ) -> *mut u8;
    pub fn enif_is_binary(env: *mut ErlNifEnv, t: ERL_NIF_TERM) -> c_int;

    // tuples and lists
    pub fn enif_make_tuple_from_array(
        env: *mut ErlNifEnv,
        arr: *const ERL_NIF_TERM,
        n: c_uint,
    ) -> ERL_NIF_TERM;
    pub fn enif_get_tuple(
        env: *mut ErlNifEnv,
        t: ERL_NIF_TERM,
        arity: *mut c_int,
        arr: *mut *const ERL_NIF_TERM,
    ) -> c_int;
    pub fn enif_make_list_from_array(
        env: *mut ErlNifEnv,
        arr: *const ERL_NIF_TERM,
        n: c_uint,
    ) -> ERL_NIF_TERM;
    pub fn enif_make_list_cell(
        env: *mut ErlNifEnv,
        head: ERL_NIF_TERM,
        tail: ERL_NIF_TERM,
    ) -> ERL_NIF_TERM;
    pub fn enif_get_list_cell(
        env: *mut ErlNifEnv,
        t: ERL_NIF_TERM,
        head: *mut ERL_NIF_TERM,
        tail: *mut ERL_NIF_TERM,
    ) -> c_int;
    pub fn enif_get_list_length(env: *mut ErlNifEnv, t: ERL_NIF_TERM, len: *mut c_uint) -> c_int;
    pub fn enif_is_empty_list(env: *mut ErlNifEnv, t: ERL_NIF_TERM) -> c_int;

    // maps: in the VM only (a server program has none: a job that uses
    // them fails to link its server)
    pub fn enif_make_new_map(env: *mut ErlNifEnv) -> ERL_NIF_TERM;
    pub fn enif_make_map_put(
        env: *mut ErlNifEnv,
        map: ERL_NIF_TERM,
        key: ERL_NIF_TERM,
        value: ERL_NIF_TERM,
        out: *mut ERL_NIF_TERM,
    ) -> c_int;
    pub fn enif_get_map_value(
        env: *mut ErlNifEnv,
        map: ERL_NIF_TERM,
        key: ERL_NIF_TERM,
        out: *mut ERL_NIF_TERM,
    ) -> c_int;
    pub fn enif_get_map_size(env: *mut ErlNifEnv, map: ERL_NIF_TERM, size: *mut usize) -> c_int;

    // which thread runs this (ERL_NIF_THR_*: 1 normal, 2 dirty CPU, 3
    // dirty I/O scheduler)
    pub fn enif_thread_type() -> c_int;

    // memory and environments
    pub fn enif_alloc_env() -> *mut ErlNifEnv;
    pub fn enif_free_env(env: *mut ErlNifEnv);
}

// the C long is 64 bits where these declarations are used
const _: () = assert!(std::mem::size_of::<c_long>() == 8 && std::mem::size_of::<c_ulong>() == 8);
