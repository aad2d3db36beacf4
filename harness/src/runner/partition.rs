//! `--partition k/n`: splits one suite across the legs of a CI matrix.
//!
//! A scenario belongs to the partition its id hashes to, with FNV-1a (64-bit): a hash fixed
//! by its definition, so the split is the same on every machine and every Rust version
//! (std's `DefaultHasher` promises neither), and adding a scenario never moves the others.

use std::fmt;
use std::str::FromStr;

/// Partition `index` (1-based) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Partition {
    index: u32,
    count: u32,
}

impl Partition {
    /// Partition `index` of `count`; `None` unless `1 <= index <= count`.
    pub fn new(index: u32, count: u32) -> Option<Self> {
        (index >= 1 && index <= count).then_some(Partition { index, count })
    }

    /// K: which partition, from 1.
    pub fn index(self) -> u32 {
        self.index
    }

    /// N: how many partitions.
    pub fn count(self) -> u32 {
        self.count
    }

    /// Whether the scenario with this id runs in this partition.
    pub fn contains(self, id: &str) -> bool {
        fnv1a(id.as_bytes()) % u64::from(self.count) == u64::from(self.index - 1)
    }

    /// Keeps the items whose id falls in this partition, in their order.
    pub fn select<T>(self, items: Vec<T>, id: impl Fn(&T) -> &str) -> Vec<T> {
        items.into_iter().filter(|s| self.contains(id(s))).collect()
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Partition {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let usage = || format!("{s:?}: expected K/N with 1 <= K <= N, e.g. 2/3");
        let (k, n) = s.trim().split_once('/').ok_or_else(usage)?;
        let k: u32 = k.trim().parse().map_err(|_| usage())?;
        let n: u32 = n.trim().parse().map_err(|_| usage())?;
        Partition::new(k, n).ok_or_else(usage)
    }
}

/// FNV-1a, 64-bit (offset basis and prime from the FNV specification).
fn fnv1a(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET, |h, b| (h ^ u64::from(*b)).wrapping_mul(PRIME))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_published_test_vectors() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn parsing_accepts_k_of_n_only() {
        assert_eq!("2/3".parse(), Ok(Partition { index: 2, count: 3 }));
        assert_eq!(" 1 / 1 ".parse::<Partition>().unwrap().to_string(), "1/1");
        for bad in ["0/3", "4/3", "1/0", "3", "a/b", "-1/3", ""] {
            assert!(bad.parse::<Partition>().is_err(), "{bad}");
        }
    }

    #[test]
    fn every_id_lands_in_exactly_one_partition() {
        let ids: Vec<String> = (0..500)
            .map(|i| format!("area{}/case-{i}", i % 7))
            .collect();
        for n in 1..=6 {
            let mut hits = vec![0; ids.len()];
            for k in 1..=n {
                let p = Partition::new(k, n).unwrap();
                for (i, id) in ids.iter().enumerate() {
                    hits[i] += usize::from(p.contains(id));
                }
            }
            assert!(hits.iter().all(|&h| h == 1), "n={n}");
        }
        // And the split is not degenerate: each third holds a fair share.
        for k in 1..=3 {
            let p = Partition::new(k, 3).unwrap();
            let n = ids.iter().filter(|id| p.contains(id)).count();
            assert!((120..=215).contains(&n), "{p}: {n} of 500");
        }
    }
}
