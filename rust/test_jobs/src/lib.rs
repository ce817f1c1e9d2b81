//! Elixir.WellBehaved.Test.RustJobs: jobs and NIFs that exercise the
//! crate from the VM and from a server program.
//!
//! - `fold(n)`: the C test library's fold of 0..n (sdk_jobs_nif.c).
//! - `panicky(at, n)`: n units of work, with a panic in the callback `at`
//!   names (decode, predict, setup, init, step, result, drop, memory, or
//!   none).
//! - `refusing(at)`: an error where `at` says (decode_badarg,
//!   decode_reason, init_reason, result_badarg, result_raise, or none).
//! - `sum_list(list)`: the sum of a list of integers, copied by init and
//!   added one per unit.
//! - NIFs of the library's own: `roundtrip(kind, term)`, `map_of(pairs)`,
//!   `map_get(map, key)`, `boom()` and `stash_bytes(data)`.
use std::cell::RefCell;

use well_behaved::{ArgTerm, Bytes, Env, Error, Job, Step, Term};

/// The C test library's fold (c_src/test/sdk_jobs_nif.c): acc * K + i
/// for i in 0..n, wrapping.
pub struct Fold {
    next: u64,
    acc: u64,
}

// a count, no view: later calls keep the first call's arguments
#[derive(Clone, Copy)]
pub struct FoldArgs {
    n: u64,
}

impl Job for Fold {
    type Args = FoldArgs;
    const ARGC: usize = 1;

    fn decode<'a>(_env: Env<'a>, args: &[Term<'a>]) -> Result<FoldArgs, Error<'a>> {
        Ok(FoldArgs {
            n: args[0].decode_u64()?,
        })
    }

    fn predict(args: &FoldArgs) -> u64 {
        args.n
    }

    fn init<'a>(_env: Env<'a>, _args: &FoldArgs) -> Result<Self, Error<'a>> {
        Ok(Fold { next: 0, acc: 0 })
    }

    fn step(&mut self, args: &FoldArgs, budget: u64) -> Step {
        let end = args.n.min(self.next.saturating_add(budget));
        let start = self.next;
        for i in start..end {
            self.acc = self
                .acc
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(i);
        }
        self.next = end;
        if end == args.n {
            Step::Done(end - start)
        } else {
            Step::More(end - start)
        }
    }

    fn result<'a>(&mut self, env: Env<'a>, _args: &FoldArgs) -> Result<Term<'a>, Error<'a>> {
        Ok(env.u64(self.acc))
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    None,
    Decode,
    Predict,
    Setup,
    Init,
    Step,
    Result,
    Drop,
    Memory,
    // a panic whose payload panics again when dropped
    Payload,
}

struct Bomb;

impl Drop for Bomb {
    fn drop(&mut self) {
        panic!("the payload's drop panicked");
    }
}

pub struct PanickyArgs {
    at: At,
    n: u64,
}

pub struct Panicky {
    at: At,
    left: u64,
    // heap memory the job owns, so that a leak would show
    _buffer: Vec<u8>,
}

impl Job for Panicky {
    type Args = PanickyArgs;
    const ARGC: usize = 2;

    fn decode<'a>(_env: Env<'a>, args: &[Term<'a>]) -> Result<PanickyArgs, Error<'a>> {
        let at = match args[0].decode_atom()?.as_str() {
            "none" => At::None,
            "decode" => panic!("decode panicked"),
            "predict" => At::Predict,
            "setup" => At::Setup,
            "init" => At::Init,
            "step" => At::Step,
            "result" => At::Result,
            "drop" => At::Drop,
            "memory" => At::Memory,
            "payload" => At::Payload,
            _ => return Err(Error::BadArg),
        };
        let _ = At::Decode;
        Ok(PanickyArgs {
            at,
            n: args[1].decode_u64()?,
        })
    }

    fn predict(args: &PanickyArgs) -> u64 {
        assert!(args.at != At::Predict, "predict panicked");
        args.n
    }

    fn setup(args: &PanickyArgs) -> u64 {
        assert!(args.at != At::Setup, "setup panicked");
        0
    }

    fn init<'a>(_env: Env<'a>, args: &PanickyArgs) -> Result<Self, Error<'a>> {
        assert!(args.at != At::Init, "init panicked");
        Ok(Panicky {
            at: args.at,
            left: args.n,
            _buffer: vec![1; 4096],
        })
    }

    fn step(&mut self, _args: &PanickyArgs, budget: u64) -> Step {
        let n = budget.min(self.left);
        self.left -= n;
        if self.at == At::Step && self.left < 2 {
            panic!("step panicked with {} left", self.left);
        }
        if self.at == At::Payload && self.left < 2 {
            std::panic::panic_any(Bomb);
        }
        if self.left == 0 {
            Step::Done(n)
        } else {
            Step::More(n)
        }
    }

    fn result<'a>(&mut self, env: Env<'a>, args: &PanickyArgs) -> Result<Term<'a>, Error<'a>> {
        assert!(self.at != At::Result, "result panicked");
        Ok(env.u64(args.n))
    }

    fn memory(&self) -> usize {
        assert!(self.at != At::Memory, "memory panicked");
        4096
    }
}

impl Drop for Panicky {
    fn drop(&mut self) {
        if self.at == At::Drop {
            panic!("drop panicked");
        }
    }
}

pub struct RefusingArgs {
    at: u8,
}

pub struct Refusing {
    at: u8,
}

const AT_NAMES: [&str; 6] = [
    "none",
    "decode_badarg",
    "decode_reason",
    "init_reason",
    "result_badarg",
    "result_raise",
];

impl Job for Refusing {
    type Args = RefusingArgs;
    const ARGC: usize = 1;

    fn decode<'a>(env: Env<'a>, args: &[Term<'a>]) -> Result<RefusingArgs, Error<'a>> {
        let name = args[0].decode_atom()?;
        let at = AT_NAMES
            .iter()
            .position(|n| *n == name)
            .ok_or(Error::BadArg)? as u8;
        match at {
            1 => Err(Error::BadArg),
            2 => Err(Error::reason(env.tuple(&[env.atom("bad"), env.u64(2)]))),
            _ => Ok(RefusingArgs { at }),
        }
    }

    fn predict(_args: &RefusingArgs) -> u64 {
        1
    }

    fn init<'a>(env: Env<'a>, args: &RefusingArgs) -> Result<Self, Error<'a>> {
        if args.at == 3 {
            return Err(Error::reason(env.atom("not_now")));
        }
        Ok(Refusing { at: args.at })
    }

    fn step(&mut self, _args: &RefusingArgs, _budget: u64) -> Step {
        Step::Done(1)
    }

    fn result<'a>(&mut self, env: Env<'a>, _args: &RefusingArgs) -> Result<Term<'a>, Error<'a>> {
        match self.at {
            4 => Err(Error::BadArg),
            5 => Err(Error::reason(
                env.tuple(&[env.atom("raised"), env.binary(b"why")]),
            )),
            _ => Ok(env.atom("ok")),
        }
    }
}

pub struct SumListArgs {
    list: ArgTerm,
    len: usize,
}

pub struct SumList {
    items: Vec<u64>,
    next: usize,
    sum: u64,
}

impl Job for SumList {
    type Args = SumListArgs;
    const ARGC: usize = 1;

    fn decode<'a>(_env: Env<'a>, args: &[Term<'a>]) -> Result<SumListArgs, Error<'a>> {
        let len = args[0].decode_list()?.len();
        Ok(SumListArgs {
            list: args[0].as_arg(),
            len,
        })
    }

    fn predict(args: &SumListArgs) -> u64 {
        args.len as u64
    }

    fn init<'a>(env: Env<'a>, args: &SumListArgs) -> Result<Self, Error<'a>> {
        let items = args.list.term(env).decode_list()?;
        let items = items
            .iter()
            .map(|t| t.decode_u64())
            .collect::<Result<Vec<_>, _>>()?;
        Ok(SumList {
            items,
            next: 0,
            sum: 0,
        })
    }

    /// Adds up to `budget` items, asking the clock every 1024 whether the
    /// step's time is up (as a job with uneven units would).
    fn step(&mut self, _args: &SumListArgs, budget: u64) -> Step {
        let end = self
            .items
            .len()
            .min(self.next.saturating_add(budget as usize));
        let start = self.next;
        while self.next < end {
            let stop = end.min(self.next + 1024);
            for v in &self.items[self.next..stop] {
                self.sum = self.sum.wrapping_add(*v);
            }
            self.next = stop;
            if well_behaved::slice_spent() {
                break;
            }
        }
        let (n, end) = ((self.next - start) as u64, self.next);
        if end == self.items.len() {
            Step::Done(n)
        } else {
            Step::More(n)
        }
    }

    fn result<'a>(&mut self, env: Env<'a>, _args: &SumListArgs) -> Result<Term<'a>, Error<'a>> {
        Ok(env.u64(self.sum))
    }

    fn memory(&self) -> usize {
        self.items.capacity() * 8
    }
}

thread_local! {
    static STASHED: RefCell<Option<Bytes>> = RefCell::new(None);
}

/// Keeps a view of its binary in a thread-local, and reads the one the
/// previous call on this thread kept: a view past its call panics.
fn stash_bytes<'a>(env: Env<'a>, args: &[Term<'a>]) -> Result<Term<'a>, Error<'a>> {
    let fresh = args[0].decode_bytes()?;
    let old = STASHED.with(|s| s.replace(Some(fresh)));
    Ok(match old {
        Some(bytes) => env.binary(bytes.as_slice()),
        None => env.atom("stashed"),
    })
}

/// Decodes `term` as `kind` says and makes it again.
fn roundtrip<'a>(env: Env<'a>, args: &[Term<'a>]) -> Result<Term<'a>, Error<'a>> {
    let term = args[1];
    Ok(match args[0].decode_atom()?.as_str() {
        "u64" => env.u64(term.decode_u64()?),
        "i64" => env.i64(term.decode_i64()?),
        "u32" => env.u64(term.decode_u32()? as u64),
        "i32" => env.i64(term.decode_i32()? as i64),
        "f64" => env.f64(term.decode_f64()?)?,
        "bool" => env.bool(term.decode_bool()?),
        "atom" => env.atom(&term.decode_atom()?),
        "atom_of" => env.atom(&String::from_utf8_lossy(term.decode_bytes()?.as_slice())),
        "bytes" => env.binary(term.decode_bytes()?.as_slice()),
        "iodata" => env.binary(term.decode_iodata()?.as_slice()),
        "list" => env.list(&term.decode_list()?),
        "tuple" => env.tuple(&term.decode_tuple()?),
        _ => return Err(Error::BadArg),
    })
}

/// A map of a list of `{key, value}` pairs.
fn map_of<'a>(env: Env<'a>, args: &[Term<'a>]) -> Result<Term<'a>, Error<'a>> {
    let mut pairs = Vec::new();
    for pair in args[0].decode_list()? {
        let kv = pair.decode_tuple()?;
        if kv.len() != 2 {
            return Err(Error::BadArg);
        }
        pairs.push((kv[0], kv[1]));
    }
    Ok(env.map(&pairs))
}

fn map_get<'a>(_env: Env<'a>, args: &[Term<'a>]) -> Result<Term<'a>, Error<'a>> {
    args[0].map_get(args[1])
}

/// The thread it runs on (erl_nif's thread type): declared [dirty_cpu].
fn thread_type<'a>(env: Env<'a>, _args: &[Term<'a>]) -> Result<Term<'a>, Error<'a>> {
    Ok(env.i64(unsafe { well_behaved::sys::enif_thread_type() } as i64))
}

/// The runtime's calls outside a job: its slice in force; memory held
/// outside jobs, added (`hold`, a signed delta); a block handed to the
/// runtime's thread to free (`drop_later`, its size).
fn runtime_call<'a>(env: Env<'a>, args: &[Term<'a>]) -> Result<Term<'a>, Error<'a>> {
    Ok(match args[0].decode_atom()?.as_str() {
        "slice_ns" => env.i64(well_behaved::slice_ns()),
        "hold" => {
            well_behaved::resident_bytes(args[1].decode_i64()?);
            env.atom("ok")
        }
        "drop_later" => {
            well_behaved::drop_later(Box::new(vec![1u8; args[1].decode_usize()?]));
            env.atom("ok")
        }
        _ => return Err(Error::BadArg),
    })
}

fn boom<'a>(_env: Env<'a>, _args: &[Term<'a>]) -> Result<Term<'a>, Error<'a>> {
    panic!("boom")
}

well_behaved::nif_init! {
    module: "Elixir.WellBehaved.Test.RustJobs",
    jobs: {
        fold: Fold [keep_args],
        panicky: Panicky,
        refusing: Refusing,
        sum_list: SumList,
    },
    nifs: { roundtrip/2 => roundtrip, map_of/1 => map_of, map_get/2 => map_get, boom/0 => boom,
        stash_bytes/1 => stash_bytes,
        runtime_call/2 => runtime_call,
        thread_type/0 => thread_type [dirty_cpu],
        normal_thread_type/0 => thread_type,
    },
}
