//! Elixir.WellBehaved.Lab.RustNative: the lab's jobs written in Rust, to
//! hold a Rust job to the same job written in C (the overhead and
//! lateness suites time both on equal runtime settings).
//!
//! - `rust_spin(n)`: the lab's C Spin (`c_src/spin/spin.c`,
//!   `c_src/nif/spin_job.c`) round for round: n xorshift64 rounds from the
//!   same seed, at least one per step while any remain, 2.7 ns a unit;
//!   the result is the final value, so both give the same checksum.
use well_behaved::{Env, Error, Job, Step, Term};

/// The C spin's seed (`wb_spin_init`).
const SEED: u64 = 0x9E37_79B9_7F4A_7C15;

pub struct RustSpin {
    remaining: u64,
    value: u64,
}

// a count, no view: like the C job, which has no bind, later calls keep
// the first call's arguments
#[derive(Clone, Copy)]
pub struct SpinArgs {
    n: u64,
}

impl Job for RustSpin {
    type Args = SpinArgs;
    const ARGC: usize = 1;
    // one xorshift round: a 6-cycle dependency chain, as the C job says
    const PS_PER_UNIT: u64 = 2700;

    fn decode<'a>(_env: Env<'a>, args: &[Term<'a>]) -> Result<SpinArgs, Error<'a>> {
        Ok(SpinArgs {
            n: args[0].decode_u64()?,
        })
    }

    fn predict(args: &SpinArgs) -> u64 {
        args.n
    }

    fn init<'a>(_env: Env<'a>, args: &SpinArgs) -> Result<Self, Error<'a>> {
        Ok(RustSpin {
            remaining: args.n,
            value: SEED,
        })
    }

    fn step(&mut self, _args: &SpinArgs, budget: u64) -> Step {
        let mut n = budget.min(self.remaining);
        if n == 0 && self.remaining > 0 {
            n = 1;
        }
        let mut x = self.value;
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        self.value = x;
        self.remaining -= n;
        if self.remaining == 0 {
            Step::Done(n)
        } else {
            Step::More(n)
        }
    }

    fn result<'a>(&mut self, env: Env<'a>, _args: &SpinArgs) -> Result<Term<'a>, Error<'a>> {
        Ok(env.u64(self.value))
    }
}

well_behaved::nif_init! {
    module: "Elixir.WellBehaved.Lab.RustNative",
    jobs: { rust_spin: RustSpin [keep_args] },
}
