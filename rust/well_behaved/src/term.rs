//! Terms: reading a job's arguments and making its result.
//!
//! An [`Env`] and the [`Term`]s made in it are valid for one callback
//! (`decode`, `init` or `result`): the lifetime `'a` keeps them there. A
//! binary's bytes are read through [`Bytes`], a view the runtime renews at
//! every call of a job (see [`crate::Job`]).
use std::cell::Cell;
use std::marker::PhantomData;
use std::os::raw::{c_char, c_int, c_uint};
use std::ptr;

use crate::sys::{self, ErlNifBinary, ErlNifEnv, ERL_NIF_TERM};

/// The environment a callback makes its terms in.
#[derive(Clone, Copy)]
pub struct Env<'a> {
    raw: *mut ErlNifEnv,
    _life: PhantomData<&'a mut ErlNifEnv>,
}

/// A term of an [`Env`].
#[derive(Clone, Copy)]
pub struct Term<'a> {
    env: Env<'a>,
    raw: ERL_NIF_TERM,
}

/// Why a callback fails: `badarg`, or a reason term of the callback's
/// environment (the lifetime keeps it there). From `decode` and `init` the
/// caller gets `{:error, reason}` (`{:error, :badarg}`); from `result` the
/// reason is raised (`ArgumentError` for `badarg`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error<'a> {
    /// The arguments are not what the job takes.
    BadArg,
    /// A reason term.
    Reason(Term<'a>),
}

impl<'a> Error<'a> {
    /// A reason term: `{:error, reason}` from `decode` and `init`, raised
    /// from `result`.
    pub fn reason(term: Term<'a>) -> Error<'a> {
        Error::Reason(term)
    }

    pub(crate) fn term(self, env: Env<'_>) -> ERL_NIF_TERM {
        match self {
            Error::BadArg => env.atom("badarg").raw,
            Error::Reason(t) => t.raw,
        }
    }

    pub(crate) fn raise(self, env: Env<'_>) -> ERL_NIF_TERM {
        unsafe {
            match self {
                Error::BadArg => sys::enif_make_badarg(env.raw),
                Error::Reason(t) => sys::enif_raise_exception(env.raw, t.raw),
            }
        }
    }
}

impl std::fmt::Debug for Term<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Term({:#x})", self.raw)
    }
}

/// The same term (`===`).
impl PartialEq for Term<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.is_identical(*other)
    }
}

impl Eq for Term<'_> {}

impl<'a> Env<'a> {
    /// # Safety
    /// `raw` is the environment of the running callback (or one from
    /// `enif_alloc_env` that outlives `'a`).
    pub unsafe fn from_raw(raw: *mut ErlNifEnv) -> Env<'a> {
        Env {
            raw,
            _life: PhantomData,
        }
    }

    /// The `ErlNifEnv` pointer, for erl_nif calls of your own.
    pub fn as_raw(self) -> *mut ErlNifEnv {
        self.raw
    }

    fn term(self, raw: ERL_NIF_TERM) -> Term<'a> {
        Term { env: self, raw }
    }

    /// An atom. OTP 25's atoms are Latin-1: each byte of `name` is one
    /// character, so give ASCII names. A name over 255 bytes, which no
    /// atom can have, panics (the caller gets the panic's exception).
    pub fn atom(self, name: &str) -> Term<'a> {
        assert!(
            name.len() <= 255,
            "an atom's name is at most 255 bytes: {:.40}...",
            name
        );
        self.term(unsafe {
            sys::enif_make_atom_len(self.raw, name.as_ptr() as *const c_char, name.len())
        })
    }

    /// `true` or `false`.
    pub fn bool(self, value: bool) -> Term<'a> {
        self.atom(if value { "true" } else { "false" })
    }

    /// An integer.
    pub fn u64(self, value: u64) -> Term<'a> {
        self.term(unsafe { sys::enif_make_uint64(self.raw, value) })
    }

    /// An integer.
    pub fn i64(self, value: i64) -> Term<'a> {
        self.term(unsafe { sys::enif_make_int64(self.raw, value) })
    }

    /// A float; NaN and the infinities, which the VM has no float for, are
    /// `badarg`.
    pub fn f64(self, value: f64) -> Result<Term<'a>, Error<'a>> {
        if !value.is_finite() {
            return Err(Error::BadArg);
        }
        Ok(self.term(unsafe { sys::enif_make_double(self.raw, value) }))
    }

    /// A binary holding a copy of `bytes`.
    pub fn binary(self, bytes: &[u8]) -> Term<'a> {
        let mut raw = 0;
        unsafe {
            let data = sys::enif_make_new_binary(self.raw, bytes.len(), &mut raw);
            // a server out of memory answers {error, enomem} for the job
            if !data.is_null() && !bytes.is_empty() {
                ptr::copy_nonoverlapping(bytes.as_ptr(), data, bytes.len());
            }
        }
        self.term(raw)
    }

    /// A tuple of `items`.
    pub fn tuple(self, items: &[Term<'a>]) -> Term<'a> {
        let raw: Vec<ERL_NIF_TERM> = items.iter().map(|t| t.raw).collect();
        self.term(unsafe {
            sys::enif_make_tuple_from_array(self.raw, raw.as_ptr(), raw.len() as c_uint)
        })
    }

    /// A list of `items`.
    pub fn list(self, items: &[Term<'a>]) -> Term<'a> {
        let raw: Vec<ERL_NIF_TERM> = items.iter().map(|t| t.raw).collect();
        self.term(unsafe {
            sys::enif_make_list_from_array(self.raw, raw.as_ptr(), raw.len() as c_uint)
        })
    }

    /// `{:ok, term}`.
    pub fn ok(self, term: Term<'a>) -> Term<'a> {
        self.tuple(&[self.atom("ok"), term])
    }

    /// `{:error, term}`.
    pub fn error(self, term: Term<'a>) -> Term<'a> {
        self.tuple(&[self.atom("error"), term])
    }

    /// A map of `pairs`, the last of equal keys kept. In the VM only: a
    /// server program (`schedule: :external`) has no maps, and a job that
    /// makes one fails to link its server.
    pub fn map(self, pairs: &[(Term<'a>, Term<'a>)]) -> Term<'a> {
        unsafe {
            let mut map = sys::enif_make_new_map(self.raw);
            for (k, v) in pairs {
                let mut out = 0;
                if sys::enif_make_map_put(self.raw, map, k.raw, v.raw, &mut out) != 0 {
                    map = out;
                }
            }
            self.term(map)
        }
    }
}

impl<'a> Term<'a> {
    /// # Safety
    /// `raw` is a term of `env`.
    pub unsafe fn from_raw(env: Env<'a>, raw: ERL_NIF_TERM) -> Term<'a> {
        Term { env, raw }
    }

    /// The `ERL_NIF_TERM`, for erl_nif calls of your own.
    pub fn as_raw(self) -> ERL_NIF_TERM {
        self.raw
    }

    /// The environment the term belongs to.
    pub fn env(self) -> Env<'a> {
        self.env
    }

    /// An integer in `0..=u64::MAX`.
    pub fn decode_u64(self) -> Result<u64, Error<'a>> {
        let mut v = 0;
        ok_if(
            unsafe { sys::enif_get_uint64(self.env.raw, self.raw, &mut v) } != 0,
            v,
        )
    }

    /// An integer in `i64::MIN..=i64::MAX`.
    pub fn decode_i64(self) -> Result<i64, Error<'a>> {
        let mut v = 0;
        ok_if(
            unsafe { sys::enif_get_int64(self.env.raw, self.raw, &mut v) } != 0,
            v,
        )
    }

    /// A non-negative integer that fits a `usize`.
    pub fn decode_usize(self) -> Result<usize, Error<'a>> {
        self.decode_u64()
            .and_then(|v| usize::try_from(v).map_err(|_| Error::BadArg))
    }

    /// An integer that fits a `u32`.
    pub fn decode_u32(self) -> Result<u32, Error<'a>> {
        self.decode_u64()
            .and_then(|v| u32::try_from(v).map_err(|_| Error::BadArg))
    }

    /// An integer that fits an `i32`.
    pub fn decode_i32(self) -> Result<i32, Error<'a>> {
        self.decode_i64()
            .and_then(|v| i32::try_from(v).map_err(|_| Error::BadArg))
    }

    /// A float (an integer is not one, as in erl_nif).
    pub fn decode_f64(self) -> Result<f64, Error<'a>> {
        let mut v = 0.0;
        ok_if(
            unsafe { sys::enif_get_double(self.env.raw, self.raw, &mut v) } != 0,
            v,
        )
    }

    /// `true` or `false`.
    pub fn decode_bool(self) -> Result<bool, Error<'a>> {
        if self.is_atom("true") {
            Ok(true)
        } else if self.is_atom("false") {
            Ok(false)
        } else {
            Err(Error::BadArg)
        }
    }

    /// The atom's name, its Latin-1 characters as a `String`.
    pub fn decode_atom(self) -> Result<String, Error<'a>> {
        let mut len: c_uint = 0;
        unsafe {
            if sys::enif_get_atom_length(self.env.raw, self.raw, &mut len, sys::ERL_NIF_LATIN1) == 0
            {
                return Err(Error::BadArg);
            }
            let mut buf = vec![0u8; len as usize + 1];
            let got = sys::enif_get_atom(
                self.env.raw,
                self.raw,
                buf.as_mut_ptr() as *mut c_char,
                buf.len() as c_uint,
                sys::ERL_NIF_LATIN1,
            );
            if got <= 0 {
                return Err(Error::BadArg);
            }
            buf.truncate(got as usize - 1);
            Ok(buf.iter().map(|&b| b as char).collect())
        }
    }

    /// Whether the term is the atom `name`.
    pub fn is_atom(self, name: &str) -> bool {
        unsafe {
            sys::enif_is_atom(self.env.raw, self.raw) != 0
                && sys::enif_is_identical(self.raw, self.env.atom(name).raw) != 0
        }
    }

    /// A binary's bytes (a bitstring whose size is not whole bytes is
    /// `badarg`).
    pub fn decode_bytes(self) -> Result<Bytes, Error<'a>> {
        self.inspect(sys::enif_inspect_binary)
    }

    /// The bytes of iodata (a binary, or a list of bytes, binaries and
    /// such lists), flattened into one binary of this call's when it is
    /// not one already.
    pub fn decode_iodata(self) -> Result<Bytes, Error<'a>> {
        self.inspect(sys::enif_inspect_iolist_as_binary)
    }

    /// A view of the bytes an erl_nif inspect call finds.
    fn inspect(
        self,
        how: unsafe extern "C" fn(*mut ErlNifEnv, ERL_NIF_TERM, *mut ErlNifBinary) -> c_int,
    ) -> Result<Bytes, Error<'a>> {
        let mut bin = ErlNifBinary::zeroed();
        ok_if(unsafe { how(self.env.raw, self.raw, &mut bin) } != 0, ())?;
        Ok(Bytes {
            data: bin.data,
            len: bin.size,
            call: this_call(),
            _not_send: PhantomData,
        })
    }

    /// A proper list's elements.
    pub fn decode_list(self) -> Result<Vec<Term<'a>>, Error<'a>> {
        let mut len: c_uint = 0;
        unsafe {
            if sys::enif_get_list_length(self.env.raw, self.raw, &mut len) == 0 {
                return Err(Error::BadArg);
            }
            let mut items = Vec::with_capacity(len as usize);
            let mut rest = self.raw;
            let (mut head, mut tail) = (0, 0);
            while sys::enif_get_list_cell(self.env.raw, rest, &mut head, &mut tail) != 0 {
                items.push(self.env.term(head));
                rest = tail;
            }
            Ok(items)
        }
    }

    /// A tuple's elements.
    pub fn decode_tuple(self) -> Result<Vec<Term<'a>>, Error<'a>> {
        let mut arity = 0;
        let mut elements: *const ERL_NIF_TERM = ptr::null();
        unsafe {
            if sys::enif_get_tuple(self.env.raw, self.raw, &mut arity, &mut elements) == 0 {
                return Err(Error::BadArg);
            }
            if arity == 0 {
                return Ok(Vec::new());
            }
            let raw = std::slice::from_raw_parts(elements, arity as usize);
            Ok(raw.iter().map(|&t| self.env.term(t)).collect())
        }
    }

    /// The value of `key` in a map; `badarg` when the term is no map or
    /// the key is absent. In the VM only, as [`Env::map`].
    pub fn map_get(self, key: Term<'a>) -> Result<Term<'a>, Error<'a>> {
        let mut value = 0;
        ok_if(
            unsafe { sys::enif_get_map_value(self.env.raw, self.raw, key.raw, &mut value) } != 0,
            (),
        )?;
        Ok(self.env.term(value))
    }

    /// Whether both are the same term (`===`).
    pub fn is_identical(self, other: Term<'_>) -> bool {
        unsafe { sys::enif_is_identical(self.raw, other.raw) != 0 }
    }
}

// The call of the library's code running on this thread, by a number
// each thread counts up (fixed cells: no destructor to register). A view
// ([`Bytes`], [`ArgTerm`]) is valid in the call that made it only: a
// binary's bytes and a term may move between calls. Each decode and each
// plain NIF starts a call; a step or a result runs in the call of the
// decode its job's arguments came from.
thread_local! {
    static LAST: Cell<u64> = const { Cell::new(0) };
    static CALL: Cell<u64> = const { Cell::new(0) };
}

/// Starts a new call on this thread: the views made before it are void.
pub(crate) fn new_call() -> u64 {
    let id = LAST
        .try_with(|c| {
            let id = c.get().wrapping_add(1);
            c.set(id);
            id
        })
        .unwrap_or(u64::MAX);
    set_call(id);
    id
}

/// Makes `id` the call in force; returns the one it replaces.
pub(crate) fn set_call(id: u64) -> u64 {
    CALL.try_with(|c| c.replace(id)).unwrap_or(u64::MAX)
}

pub(crate) fn this_call() -> u64 {
    CALL.try_with(|c| c.get()).unwrap_or(u64::MAX)
}

/// A view kept past its call panics (the caller gets the panic's
/// exception) rather than reading memory that may have moved.
fn check_call(call: u64, what: &str) {
    assert!(
        call == this_call(),
        "{} was kept past the call that made it: keep views in the job's Args only",
        what
    );
}

/// An argument term kept as it is in a job's `Args`, to read in `init`
/// or `result` with their [`Env`] (say a list whose elements `init`
/// copies): like [`Bytes`], it is made again at every call, and is
/// neither `Copy`, `Clone` nor `Send`. A step, which has no environment,
/// cannot read it; one kept past its call panics when read.
pub struct ArgTerm {
    raw: ERL_NIF_TERM,
    call: u64,
    _not_send: PhantomData<*const ()>,
}

impl ArgTerm {
    /// The term, in the environment of the callback that has it.
    pub fn term<'a>(&self, env: Env<'a>) -> Term<'a> {
        check_call(self.call, "an ArgTerm");
        env.term(self.raw)
    }
}

impl<'a> Term<'a> {
    /// The term, to keep in a job's `Args`.
    pub fn as_arg(self) -> ArgTerm {
        ArgTerm {
            raw: self.raw,
            call: this_call(),
            _not_send: PhantomData,
        }
    }
}

fn ok_if<'a, T>(ok: bool, value: T) -> Result<T, Error<'a>> {
    if ok {
        Ok(value)
    } else {
        Err(Error::BadArg)
    }
}

/// The bytes of a binary argument: a view that the runtime makes again at
/// every call of the job, since a binary's bytes may move between calls.
/// It is neither `Copy`, `Clone` nor `Send`, so a job (which is `Send`)
/// cannot own one and reaches it only through the arguments each callback
/// is given; a slice of it lives as long as that callback, and a `Bytes`
/// kept past its call (in a thread-local, say) panics when read.
pub struct Bytes {
    data: *const u8,
    len: usize,
    call: u64,
    _not_send: PhantomData<*const u8>,
}

impl Bytes {
    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        check_call(self.call, "a Bytes");
        if self.len == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(self.data, self.len) }
        }
    }

    /// How many bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A binary of the job's own, allocated by the VM (`enif_alloc_binary`),
/// filled in the steps and handed over as a term without a copy
/// ([`OwnedBinary::into_term`]), or freed when dropped.
pub struct OwnedBinary {
    bin: ErlNifBinary,
}

// The VM's binaries may be filled and released on any thread.
unsafe impl Send for OwnedBinary {}

impl OwnedBinary {
    /// `size` bytes (uninitialised by the VM, zeroed here), or `None` when
    /// the memory cannot be had.
    pub fn new(size: usize) -> Option<OwnedBinary> {
        let mut bin = ErlNifBinary::zeroed();
        if unsafe { sys::enif_alloc_binary(size, &mut bin) } == 0 {
            return None;
        }
        let mut owned = OwnedBinary { bin };
        owned.as_mut_slice().iter_mut().for_each(|b| *b = 0);
        Some(owned)
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        if self.bin.size == 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(self.bin.data, self.bin.size) }
        }
    }

    /// The bytes, to fill.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        if self.bin.size == 0 {
            &mut []
        } else {
            unsafe { std::slice::from_raw_parts_mut(self.bin.data, self.bin.size) }
        }
    }

    /// The binary as a term, without a copy.
    pub fn into_term(self, env: Env<'_>) -> Term<'_> {
        let mut me = std::mem::ManuallyDrop::new(self);
        env.term(unsafe { sys::enif_make_binary(env.raw, &mut me.bin) })
    }
}

impl Drop for OwnedBinary {
    fn drop(&mut self) {
        unsafe { sys::enif_release_binary(&mut self.bin) }
    }
}
