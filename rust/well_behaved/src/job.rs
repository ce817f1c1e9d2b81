//! The job trait and its mapping onto the runtime's `wb_job_type`.
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::mem::{self, MaybeUninit};
use std::os::raw::{c_char, c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;
use std::sync::Once;

use crate::sys::{self, ErlNifEnv, WbJobType, ERL_NIF_TERM};
use crate::term::{Env, Error, Term};

#[cfg(panic = "abort")]
compile_error!(
    "well_behaved turns a panic in a job into an exception for its caller: build with panic = \"unwind\""
);

/// What a step did: `More(units)` when the job goes on, `Done(units)` when
/// it has finished; `units` is how many units of work the step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    More(u64),
    Done(u64),
}

/// A resumable job: the runtime runs it in whichever mode its caller
/// picks (`:normal`, `:dirty_cpu`, `:yielding`, `:yielding_dirty`,
/// `:threaded`, `:auto`) or in a server program (`:external`).
///
/// Every call of the job's NIF decodes its argument terms again
/// ([`Job::decode`], so keep it cheap: views and small values); the first
/// call predicts the work and sets the job up ([`Job::init`]); then the
/// runtime calls [`Job::step`] with a budget of units until it is done,
/// from one thread at a time but not always the same one, and finally
/// [`Job::result`] in the caller's process. The job is dropped after that,
/// or when its caller dies first, or when `:auto` starts it again after
/// a wrong prediction.
///
/// A panic in any of these becomes an exception for the caller
/// (`{:wb_panic, job, message}`, an `ErlangError` in Elixir); the VM goes
/// on. A job whose alignment is above 8 bytes does not compile: box the
/// over-aligned part.
pub trait Job: Sized + Send + 'static {
    /// The decoded arguments: views ([`crate::Bytes`], [`crate::ArgTerm`])
    /// and small values, nothing to drop, at most 240 bytes.
    type Args: 'static;
    /// How many argument terms the job takes (at most 8); its NIF takes
    /// three more (mode, flags, reference).
    const ARGC: usize;
    /// A typical cost of a unit in picoseconds: where the runtime's
    /// learning starts.
    const PS_PER_UNIT: u64 = 1000;

    /// Reads the arguments; `Err` answers `{:error, reason}`.
    fn decode<'a>(env: Env<'a>, args: &[Term<'a>]) -> Result<Self::Args, Error<'a>>;
    /// The units of work the job will take (cheap: it runs on a normal
    /// scheduler, at the first call, before `:auto` picks a mode).
    fn predict(args: &Self::Args) -> u64;
    /// The units of work `init` itself takes (default 0): a large set-up
    /// runs on a dirty scheduler first.
    fn setup(_args: &Self::Args) -> u64 {
        0
    }
    /// Sets the job up; `Err` answers `{:error, reason}`. May run on a
    /// thread of the runtime's pool, with an environment of no process.
    fn init<'a>(env: Env<'a>, args: &Self::Args) -> Result<Self, Error<'a>>;
    /// Does about `budget` units of work (`u64::MAX`: all of it). Call
    /// [`crate::slice_spent`] between units whose cost varies, and return
    /// early when it is true.
    fn step(&mut self, args: &Self::Args, budget: u64) -> Step;
    /// The result, made in `env` in the caller's process, in one go: keep
    /// it to making the term (an [`crate::OwnedBinary`] filled in the steps
    /// costs nothing). `Err` raises its reason.
    fn result<'a>(&mut self, env: Env<'a>, args: &Self::Args) -> Result<Term<'a>, Error<'a>>;
    /// Heap bytes the job owns (for the runtime's `live_bytes`), read once
    /// after `init`.
    fn memory(&self) -> usize {
        0
    }
}

/// A job type as the runtime sees it: one `static` per job, made by
/// `nif_init!`.
#[repr(transparent)]
pub struct JobType(pub WbJobType);

// Read-only after construction; its pointers name static data and functions.
unsafe impl Sync for JobType {}

/// A job's name as its NIF has it (`nif_init!` makes one per job).
///
/// # Safety
/// `NAME` ends with its only nul byte: C reads it as a string.
#[doc(hidden)]
pub unsafe trait JobName {
    const NAME: &'static str;
}

/// The decoded arguments in the runtime's buffer, and whether decoding
/// them (or predicting from them) panicked.
#[repr(C)]
struct ArgsSlot<A> {
    args: MaybeUninit<A>,
    panicked: bool,
}

const RUNNING: u8 = 1;
const POISONED: u8 = 2;

/// The state in the runtime's memory (zeroed before init).
#[repr(C)]
struct State<J: Job> {
    phase: u8,
    // the call the arguments were decoded in (see term.rs)
    call: u64,
    args: MaybeUninit<J::Args>,
    job: MaybeUninit<J>,
    panic: MaybeUninit<String>,
}

struct Checks<J>(PhantomData<J>);

impl<J: Job> Checks<J> {
    const ARGS: () = {
        assert!(
            !mem::needs_drop::<J::Args>(),
            "a Job's Args must need no drop: views and plain values"
        );
        assert!(
            mem::size_of::<ArgsSlot<J::Args>>() <= sys::WB_MAX_ARGS_SIZE,
            "a Job's Args are too large"
        );
        assert!(
            mem::align_of::<J::Args>() <= 8,
            "a Job's Args must be aligned to at most 8 bytes"
        );
        assert!(
            mem::align_of::<J>() <= 8,
            "a Job must be aligned to at most 8 bytes: box the rest"
        );
        // init returns the job by value, on the stack of whichever thread
        // runs it (a dirty scheduler's is a few hundred KiB)
        assert!(
            mem::size_of::<J>() <= 16 * 1024,
            "a Job is at most 16 KiB: box the rest"
        );
        assert!(
            J::ARGC <= sys::WB_MAX_JOB_ARGS,
            "a Job takes at most 8 arguments"
        );
    };
}

impl JobType {
    /// The runtime's view of `J`, named by `N`: every call of the job
    /// decodes its arguments again, as views need.
    pub const fn new<J: Job, N: JobName>() -> JobType {
        Self::make::<J, N, true>()
    }

    /// The same for a job whose arguments are plain values (`Copy`, so no
    /// view): its later calls skip `decode` and keep the first call's
    /// arguments (`nif_init!`'s `[keep_args]`).
    pub const fn new_keeping_args<J: Job, N: JobName>() -> JobType
    where
        J::Args: Copy,
    {
        Self::make::<J, N, false>()
    }

    const fn make<J: Job, N: JobName, const RENEW: bool>() -> JobType {
        #[allow(clippy::let_unit_value)]
        let () = Checks::<J>::ARGS;
        JobType(WbJobType {
            name: N::NAME.as_ptr() as *const c_char,
            argc: J::ARGC as c_int,
            args_size: mem::size_of::<ArgsSlot<J::Args>>(),
            state_size: mem::size_of::<State<J>>(),
            decode: Some(decode::<J>),
            predict: Some(predict::<J>),
            setup: Some(setup::<J>),
            init: Some(init::<J>),
            bind: if RENEW { Some(bind::<J>) } else { None },
            step: Some(step::<J, RENEW>),
            result: None,
            memory: Some(memory::<J>),
            destroy: Some(destroy::<J>),
            ps_per_unit: J::PS_PER_UNIT,
            take_result: Some(take_result::<J, N>),
        })
    }
}

// A panic while decoding: its message, for the init or bind that follows
// on the same thread; whether a callback of the crate's runs on this
// thread, and where its last panic was. Fixed buffers: thread-locals with
// nothing to drop register no destructor, which would keep the library
// mapped after the VM unloads it.
thread_local! {
    static DECODE_PANIC: RefCell<([u8; 240], usize)> = const { RefCell::new(([0; 240], 0)) };
    static IN_CALLBACK: Cell<bool> = const { Cell::new(false) };
    static PANIC_AT: RefCell<([u8; 160], usize)> = const { RefCell::new(([0; 160], 0)) };
}

static HOOK: Once = Once::new();

fn copy_into<const N: usize>(buf: &mut ([u8; N], usize), text: &str) {
    let mut end = text.len().min(N);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    buf.0[..end].copy_from_slice(&text.as_bytes()[..end]);
    buf.1 = end;
}

fn read_from<const N: usize>(buf: &([u8; N], usize)) -> String {
    String::from_utf8_lossy(&buf.0[..buf.1]).into_owned()
}

/// A panic hook for the library's copy of std: a panic inside a callback
/// becomes the caller's exception, so it prints nothing and only notes
/// where it happened; any other panic goes to the hook that was there.
pub fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_CALLBACK.try_with(|c| c.get()).unwrap_or(false) {
                let at = info
                    .location()
                    .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                let _ =
                    PANIC_AT.try_with(|p| copy_into(&mut p.borrow_mut(), &at.unwrap_or_default()));
            } else {
                previous(info)
            }
        }));
    });
}

/// Runs a callback, its panic turned into a message (with where it
/// happened).
pub(crate) fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let outer = IN_CALLBACK.try_with(|c| c.replace(true)).unwrap_or(false);
    let _ = PANIC_AT.try_with(|p| p.borrow_mut().1 = 0);
    let result = catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        let at = PANIC_AT
            .try_with(|p| read_from(&p.borrow()))
            .unwrap_or_default();
        let text = message(&*payload);
        // a payload whose drop panics too must not unwind into C
        if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
            mem::forget(again);
        }
        if at.is_empty() {
            text
        } else {
            format!("{} (at {})", text, at)
        }
    });
    // quiet until the payload is gone: its drop may panic too
    let _ = IN_CALLBACK.try_with(|c| c.set(outer));
    result
}

fn message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic whose payload is not a string".to_string()
    }
}

fn keep_decode_panic(text: &str) {
    let _ = DECODE_PANIC.try_with(|m| copy_into(&mut m.borrow_mut(), text));
}

fn take_decode_panic() -> String {
    DECODE_PANIC
        .try_with(|m| read_from(&m.borrow()))
        .unwrap_or_default()
}

unsafe fn args_of<J: Job>(slot: *const c_void) -> *const ArgsSlot<J::Args> {
    slot as *const ArgsSlot<J::Args>
}

unsafe extern "C" fn decode<J: Job>(
    env: *mut ErlNifEnv,
    argv: *const ERL_NIF_TERM,
    out: *mut c_void,
) -> bool {
    crate::term::new_call();
    let env = Env::from_raw(env);
    let mut terms = [Term::from_raw(env, 0); sys::WB_MAX_JOB_ARGS];
    for (i, t) in terms.iter_mut().enumerate().take(J::ARGC) {
        *t = Term::from_raw(env, *argv.add(i));
    }
    let slot = out as *mut ArgsSlot<J::Args>;
    match catch(|| J::decode(env, &terms[..J::ARGC])) {
        Ok(Ok(a)) => {
            ptr::write(
                slot,
                ArgsSlot {
                    args: MaybeUninit::new(a),
                    panicked: false,
                },
            );
            true
        }
        Ok(Err(Error::BadArg)) => false,
        Ok(Err(Error::Reason(reason))) => sys::wb_reject(reason.as_raw()),
        Err(text) => {
            keep_decode_panic(&text);
            ptr::write(
                slot,
                ArgsSlot {
                    args: MaybeUninit::uninit(),
                    panicked: true,
                },
            );
            true
        }
    }
}

/// `predict` or `setup` of the decoded arguments, which the runtime asks
/// at a job's first call only; a panic marks the arguments, and the init
/// that follows makes the job raise it. (The buffer is the runtime's
/// writable one, passed as const.)
unsafe fn units_of<J: Job>(args: *const c_void, f: fn(&J::Args) -> u64) -> u64 {
    let slot = args as *mut ArgsSlot<J::Args>;
    if (*slot).panicked {
        return 0;
    }
    let a = &*(*slot).args.as_ptr();
    match catch(|| f(a)) {
        Ok(units) => units,
        Err(text) => {
            keep_decode_panic(&text);
            (*slot).panicked = true;
            0
        }
    }
}

unsafe extern "C" fn predict<J: Job>(args: *const c_void) -> u64 {
    units_of::<J>(args, J::predict)
}

unsafe extern "C" fn setup<J: Job>(args: *const c_void) -> u64 {
    units_of::<J>(args, J::setup)
}

unsafe fn poison<J: Job>(state: *mut State<J>, text: String) {
    if (*state).phase == RUNNING {
        let job = (*state).job.as_mut_ptr();
        // a job whose drop panics too is leaked
        let _ = catch(|| ptr::drop_in_place(job));
    } else if (*state).phase == POISONED {
        ptr::drop_in_place((*state).panic.as_mut_ptr());
    }
    (*state).panic = MaybeUninit::new(text);
    (*state).phase = POISONED;
}

unsafe extern "C" fn init<J: Job>(
    env: *mut ErlNifEnv,
    args: *const c_void,
    state: *mut c_void,
    reason: *mut ERL_NIF_TERM,
) -> bool {
    let slot = args_of::<J>(args);
    let state = state as *mut State<J>;
    if (*slot).panicked {
        poison(state, take_decode_panic());
        return true;
    }
    let env = Env::from_raw(env);
    let a = &*(*slot).args.as_ptr();
    match catch(|| J::init(env, a)) {
        Ok(Ok(job)) => {
            ptr::copy_nonoverlapping(&(*slot).args, &mut (*state).args, 1);
            (*state).call = crate::term::this_call();
            (*state).job = MaybeUninit::new(job);
            (*state).phase = RUNNING;
            true
        }
        Ok(Err(e)) => {
            *reason = e.term(env);
            false
        }
        Err(text) => {
            poison(state, text);
            true
        }
    }
}

unsafe extern "C" fn bind<J: Job>(args: *const c_void, state: *mut c_void) {
    let slot = args_of::<J>(args);
    let state = state as *mut State<J>;
    if (*slot).panicked {
        poison(state, take_decode_panic());
    } else {
        ptr::copy_nonoverlapping(&(*slot).args, &mut (*state).args, 1);
        (*state).call = crate::term::this_call();
    }
}

unsafe extern "C" fn step<J: Job, const RENEW: bool>(
    state: *mut c_void,
    budget: u64,
    used: *mut u64,
) -> bool {
    let state = state as *mut State<J>;
    if (*state).phase != RUNNING {
        return true;
    }
    let job = &mut *(*state).job.as_mut_ptr();
    let a = &*(*state).args.as_ptr();
    // the step runs in its arguments' call; kept arguments hold no view,
    // and a view kept elsewhere is void in a call of its own
    let call = if RENEW {
        (*state).call
    } else {
        crate::term::new_call()
    };
    let outer = crate::term::set_call(call);
    let stepped = catch(|| job.step(a, budget));
    crate::term::set_call(outer);
    match stepped {
        Ok(Step::More(n)) => {
            *used = (*used).saturating_add(n);
            false
        }
        Ok(Step::Done(n)) => {
            *used = (*used).saturating_add(n);
            true
        }
        Err(text) => {
            poison(state, text);
            true
        }
    }
}

/// `{wb_panic, Job, Message}`, raised: the job by its NIF's name.
unsafe fn raise_panic<N: JobName>(env: Env<'_>, text: &str) -> ERL_NIF_TERM {
    raise_panic_named(env, N::NAME.trim_end_matches('\0'), text)
}

pub(crate) unsafe fn raise_panic_named(env: Env<'_>, name: &str, text: &str) -> ERL_NIF_TERM {
    let reason = env.tuple(&[
        env.atom("wb_panic"),
        env.binary(name.as_bytes()),
        env.binary(text.as_bytes()),
    ]);
    sys::enif_raise_exception(env.as_raw(), reason.as_raw())
}

unsafe extern "C" fn take_result<J: Job, N: JobName>(
    env: *mut ErlNifEnv,
    state: *mut c_void,
) -> ERL_NIF_TERM {
    let env = Env::from_raw(env);
    let state = state as *mut State<J>;
    match (*state).phase {
        RUNNING => {
            let job = &mut *(*state).job.as_mut_ptr();
            let a = &*(*state).args.as_ptr();
            let outer = crate::term::set_call((*state).call);
            let made = catch(|| job.result(env, a).map(|t| t.as_raw()));
            crate::term::set_call(outer);
            match made {
                Ok(Ok(term)) => term,
                Ok(Err(e)) => e.raise(env),
                Err(text) => raise_panic::<N>(env, &text),
            }
        }
        POISONED => raise_panic::<N>(env, &*(*state).panic.as_ptr()),
        _ => sys::enif_make_badarg(env.as_raw()),
    }
}

unsafe extern "C" fn memory<J: Job>(state: *const c_void) -> usize {
    let state = state as *const State<J>;
    match (*state).phase {
        RUNNING => {
            let job = &*(*state).job.as_ptr();
            catch(|| job.memory()).unwrap_or(0)
        }
        POISONED => (*(*state).panic.as_ptr()).capacity(),
        _ => 0,
    }
}

unsafe extern "C" fn destroy<J: Job>(state: *mut c_void) {
    let state = state as *mut State<J>;
    match (*state).phase {
        RUNNING => {
            let job = (*state).job.as_mut_ptr();
            let _ = catch(|| ptr::drop_in_place(job));
        }
        POISONED => ptr::drop_in_place((*state).panic.as_mut_ptr()),
        _ => {}
    }
    (*state).phase = 0;
}
