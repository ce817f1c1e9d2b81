//! A merge sort of a binary's 32-bit big-endian integers, in steps: read
//! the integers, merge runs of 1, 2, 4, ... between two buffers, write the
//! sorted integers into the result's binary. A unit is one element read,
//! moved or written.
use well_behaved::{Bytes, Env, Error, Job, OwnedBinary, Step, Term};

/// The argument: the integers' bytes (a view, made again at every call).
pub struct Args {
    data: Bytes,
}

enum Phase {
    /// reading element `next`
    Read {
        next: usize,
    },
    /// merging runs of `width` from one buffer into the other: the pair of
    /// runs starting at `start`, its cursors at `left` and `right`
    Merge {
        width: usize,
        start: usize,
        left: usize,
        right: usize,
    },
    /// writing element `next` of the sorted buffer
    Write {
        next: usize,
    },
    Done,
}

/// The job: two buffers, and the result's binary.
pub struct SortU32 {
    from: Vec<u32>,
    into: Vec<u32>,
    out: Option<OwnedBinary>,
    phase: Phase,
}

fn buffer(n: usize) -> Option<Vec<u32>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).ok()?;
    v.resize(n, 0);
    Some(v)
}

/// How many merge passes `n` elements take: ceil(log2(n)).
fn passes(n: usize) -> u64 {
    if n <= 1 {
        0
    } else {
        (usize::BITS - (n - 1).leading_zeros()) as u64
    }
}

impl SortU32 {
    /// Merges within the pass of `width`, `budget` elements at most;
    /// returns the elements moved.
    fn merge(&mut self, budget: u64) -> u64 {
        let n = self.from.len();
        let mut moved = 0;
        while moved < budget {
            let (width, start, mut left, mut right) = match self.phase {
                Phase::Merge {
                    width,
                    start,
                    left,
                    right,
                } => (width, start, left, right),
                _ => return moved,
            };
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let mut k = left - start + right - mid + start;
            let room = (budget - moved).min((end - k) as u64) as usize;
            for _ in 0..room {
                let take_left = right >= end || (left < mid && self.from[left] <= self.from[right]);
                self.into[k] = if take_left {
                    self.from[left]
                } else {
                    self.from[right]
                };
                if take_left {
                    left += 1
                } else {
                    right += 1
                }
                k += 1;
            }
            moved += room as u64;
            self.phase = if k < end {
                Phase::Merge {
                    width,
                    start,
                    left,
                    right,
                }
            } else if end < n {
                let next = end;
                Phase::Merge {
                    width,
                    start: next,
                    left: next,
                    right: (next + width).min(n),
                }
            } else {
                // the pass is over: the merged buffer is the one to read next
                std::mem::swap(&mut self.from, &mut self.into);
                if 2 * width >= n {
                    Phase::Write { next: 0 }
                } else {
                    Phase::Merge {
                        width: 2 * width,
                        start: 0,
                        left: 0,
                        right: (2 * width).min(n),
                    }
                }
            };
        }
        moved
    }
}

impl Job for SortU32 {
    type Args = Args;
    const ARGC: usize = 1;
    // an element moved: a compare and a store
    const PS_PER_UNIT: u64 = 2_000;

    fn decode<'a>(env: Env<'a>, args: &[Term<'a>]) -> Result<Args, Error<'a>> {
        let data = args[0].decode_bytes()?;
        if data.len() % 4 != 0 {
            return Err(Error::reason(env.atom("not_32_bit_integers")));
        }
        Ok(Args { data })
    }

    /// Read, a move per pass, write.
    fn predict(args: &Args) -> u64 {
        let n = args.data.len() / 4;
        n as u64 * (2 + passes(n))
    }

    /// Zeroing the three buffers (12 bytes an element) costs about a
    /// tenth of a unit an element.
    fn setup(args: &Args) -> u64 {
        args.data.len() as u64 / 40
    }

    fn init<'a>(env: Env<'a>, args: &Args) -> Result<Self, Error<'a>> {
        let n = args.data.len() / 4;
        let enomem = || Error::reason(env.atom("enomem"));
        let from = buffer(n).ok_or_else(enomem)?;
        let into = buffer(n).ok_or_else(enomem)?;
        let out = OwnedBinary::new(n * 4).ok_or_else(enomem)?;
        Ok(SortU32 {
            from,
            into,
            out: Some(out),
            phase: Phase::Read { next: 0 },
        })
    }

    fn step(&mut self, args: &Args, budget: u64) -> Step {
        let n = self.from.len();
        let mut used = 0;
        loop {
            let left = budget - used;
            match self.phase {
                Phase::Read { next } => {
                    let count = left.min((n - next) as u64) as usize;
                    let bytes = &args.data.as_slice()[next * 4..(next + count) * 4];
                    for (slot, word) in self.from[next..next + count]
                        .iter_mut()
                        .zip(bytes.chunks_exact(4))
                    {
                        *slot = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
                    }
                    used += count as u64;
                    self.phase = if next + count < n {
                        Phase::Read { next: next + count }
                    } else if n > 1 {
                        Phase::Merge {
                            width: 1,
                            start: 0,
                            left: 0,
                            right: 1,
                        }
                    } else {
                        Phase::Write { next: 0 }
                    };
                }
                Phase::Merge { .. } => used += self.merge(left),
                Phase::Write { next } => {
                    let count = left.min((n - next) as u64) as usize;
                    let out = self
                        .out
                        .as_mut()
                        .expect("the result's binary")
                        .as_mut_slice();
                    for (word, value) in out[next * 4..(next + count) * 4]
                        .chunks_exact_mut(4)
                        .zip(&self.from[next..next + count])
                    {
                        word.copy_from_slice(&value.to_be_bytes());
                    }
                    used += count as u64;
                    self.phase = if next + count < n {
                        Phase::Write { next: next + count }
                    } else {
                        Phase::Done
                    };
                }
                Phase::Done => return Step::Done(used),
            }
            if used >= budget {
                return if matches!(self.phase, Phase::Done) {
                    Step::Done(used)
                } else {
                    Step::More(used)
                };
            }
        }
    }

    /// The result's binary, handed over without a copy.
    fn result<'a>(&mut self, env: Env<'a>, _args: &Args) -> Result<Term<'a>, Error<'a>> {
        let out = self.out.take().ok_or(Error::BadArg)?;
        Ok(out.into_term(env))
    }

    fn memory(&self) -> usize {
        (self.from.capacity() + self.into.capacity()) * 4
            + self.out.as_ref().map_or(0, |o| o.as_slice().len())
    }
}
