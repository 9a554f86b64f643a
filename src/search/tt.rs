//! The shared, lock-free transposition table.
//!
//! Each entry is two `AtomicU64`s: the data word and the key XOR the data word (Hyatt's lockless hashing).
//! A reader recomputes `key ^ data`; an entry torn by two writers racing fails that check and reads as a miss,
//! so no lock is needed. Entries are grouped in clusters of four that share a cache line;
//! a new entry replaces the cluster's entry for the same key, else the one that is shallowest and oldest.
//!
//! The table knows no game: a move is the game's `move_key`, a score an `i16` in the search's units.
//!
//! A probe reads one cache line at a random place in a table of tens of megabytes: the search waits on main
//! memory there more than anywhere else. Two things shorten the wait. On Linux the table lives in memory of
//! its own, mapped fresh (so zero, and not touched until used) and advised to the kernel for 2 MiB pages
//! (`madvise(MADV_HUGEPAGE)`), so that a probe does not also miss the address translation cache; elsewhere,
//! or if the mapping fails, it is an ordinary allocation. And the search asks for a child's line
//! ([`TranspositionTable::prefetch`]) as soon as the move is made, before the work that comes ahead of the
//! child's probe.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// What a stored score says about the true value.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Bound {
    /// The true value is at least this (a beta cutoff).
    Lower = 1,
    /// The true value is at most this (no move reached alpha).
    Upper = 2,
    /// The exact value (a PV node).
    Exact = 3,
}

/// One probed entry.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TtEntry {
    /// The best move's key, or 0 when none is known.
    pub move_key: u32,
    pub score: i16,
    pub depth: u8,
    pub bound: Bound,
}

const CLUSTER: usize = 4;

#[repr(align(64))]
struct Cluster {
    slots: [[AtomicU64; 2]; CLUSTER],
}

impl Cluster {
    fn empty() -> Self {
        Cluster { slots: std::array::from_fn(|_| [AtomicU64::new(0), AtomicU64::new(0)]) }
    }
}

/// The table. Share it behind an `Arc` between every thread searching (Lazy SMP) and between searches.
pub struct TranspositionTable {
    clusters: Clusters,
    generation: AtomicU8,
}

/// The table's memory: mapped for large pages where the system allows it, else an ordinary allocation.
enum Clusters {
    Boxed(Box<[Cluster]>),
    #[cfg(target_os = "linux")]
    Mapped(huge::Mapping),
}

impl std::ops::Deref for Clusters {
    type Target = [Cluster];

    #[inline(always)]
    fn deref(&self) -> &[Cluster] {
        match self {
            Clusters::Boxed(b) => b,
            #[cfg(target_os = "linux")]
            Clusters::Mapped(m) => m.clusters(),
        }
    }
}

impl Clusters {
    fn new(count: usize) -> Self {
        #[cfg(target_os = "linux")]
        if let Some(m) = huge::Mapping::new(count) {
            return Clusters::Mapped(m);
        }
        Clusters::Boxed((0..count).map(|_| Cluster::empty()).collect::<Vec<_>>().into_boxed_slice())
    }
}

#[cfg(target_os = "linux")]
mod huge {
    //! Anonymous memory for the table, advised for transparent huge pages.
    use std::ffi::{c_int, c_long, c_void};
    use std::ptr::NonNull;

    use super::Cluster;

    const PROT_READ: c_int = 1;
    const PROT_WRITE: c_int = 2;
    const MAP_PRIVATE: c_int = 2;
    const MAP_ANONYMOUS: c_int = 0x20;
    const MADV_HUGEPAGE: c_int = 14;
    const HUGE_PAGE: usize = 2 << 20;
    /// The smallest page size of the processors this runs on.
    const SMALL_PAGE: usize = 4096;

    unsafe extern "C" {
        fn mmap(addr: *mut c_void, len: usize, prot: c_int, flags: c_int, fd: c_int, offset: c_long) -> *mut c_void;
        fn munmap(addr: *mut c_void, len: usize) -> c_int;
        fn madvise(addr: *mut c_void, len: usize, advice: c_int) -> c_int;
    }

    /// `count` clusters in a private anonymous mapping (zero-filled by the kernel: every slot empty).
    pub struct Mapping {
        base: NonNull<c_void>,
        len: usize,
        clusters: NonNull<Cluster>,
        count: usize,
    }

    // SAFETY: the mapping is owned by this value alone and only ever reached through `&[Cluster]`, whose
    // atomics make shared access from several threads sound.
    unsafe impl Send for Mapping {}
    // SAFETY: as above.
    unsafe impl Sync for Mapping {}

    impl Mapping {
        /// None for tables under one huge page (not worth it) or when the system refuses the mapping.
        pub fn new(count: usize) -> Option<Mapping> {
            let bytes = count.checked_mul(std::mem::size_of::<Cluster>())?;
            if bytes < HUGE_PAGE {
                return None;
            }
            // One huge page more than needed, so that the table can start on a huge-page boundary.
            let len = bytes.checked_add(HUGE_PAGE)?;
            // SAFETY: a new private anonymous mapping; no existing memory is touched.
            let base =
                unsafe { mmap(std::ptr::null_mut(), len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) };
            if base.is_null() || base as isize == -1 {
                return None;
            }
            let offset = (HUGE_PAGE - base as usize % HUGE_PAGE) % HUGE_PAGE;
            // SAFETY: `offset < HUGE_PAGE`, so the table's `bytes` lie inside the mapping of `len` bytes.
            let start = unsafe { (base as *mut u8).add(offset) };
            // SAFETY: advice on memory of this mapping only; failure (no transparent huge pages) is harmless.
            unsafe { madvise(start as *mut c_void, bytes, MADV_HUGEPAGE) };
            // The kernel provides each page at its first store, and for huge pages that can take long (64 MiB:
            // some 150 ms on a busy machine, most of a first 200 ms search, which then reached depth 3 instead
            // of 12). So every page is stored to now, when the table is made, not inside the first search.
            for page in (0..bytes).step_by(SMALL_PAGE) {
                // SAFETY: `page < bytes`, inside the table's part of the mapping; nothing refers to it yet, and
                // zero is what the kernel gave it.
                unsafe { start.add(page).write_volatile(0) };
            }
            Some(Mapping { base: NonNull::new(base)?, len, clusters: NonNull::new(start as *mut Cluster)?, count })
        }

        #[inline(always)]
        pub fn clusters(&self) -> &[Cluster] {
            // SAFETY: `count` clusters start at `clusters`, aligned (a huge-page boundary) and inside the
            // mapping, which lives as long as `self`; all-zero bytes are valid empty `AtomicU64` slots.
            unsafe { std::slice::from_raw_parts(self.clusters.as_ptr(), self.count) }
        }
    }

    impl Drop for Mapping {
        fn drop(&mut self) {
            // SAFETY: the mapping made in `new`, unmapped once; no reference to it outlives `self`.
            unsafe { munmap(self.base.as_ptr(), self.len) };
        }
    }
}

// data word layout: move_key 32 | score 16 | depth 8 | bound 2 | generation 6
fn pack(move_key: u32, score: i16, depth: u8, bound: Bound, generation: u8) -> u64 {
    (move_key as u64)
        | ((score as u16 as u64) << 32)
        | ((depth as u64) << 48)
        | ((bound as u64) << 56)
        | (((generation & 63) as u64) << 58)
}

fn unpack(data: u64) -> Option<TtEntry> {
    let bound = match (data >> 56) & 3 {
        1 => Bound::Lower,
        2 => Bound::Upper,
        3 => Bound::Exact,
        _ => return None,
    };
    Some(TtEntry { move_key: data as u32, score: (data >> 32) as u16 as i16, depth: (data >> 48) as u8, bound })
}

fn generation_of(data: u64) -> u8 {
    ((data >> 58) & 63) as u8
}

impl TranspositionTable {
    /// A table of about `mb` MiB (at least one cluster).
    pub fn new(mb: usize) -> Self {
        let bytes = mb.saturating_mul(1 << 20);
        let count = (bytes / std::mem::size_of::<Cluster>()).max(1);
        TranspositionTable { clusters: Clusters::new(count), generation: AtomicU8::new(0) }
    }

    /// Forget everything (a new game).
    pub fn clear(&self) {
        for c in self.clusters.iter() {
            for s in &c.slots {
                s[0].store(0, Ordering::Relaxed);
                s[1].store(0, Ordering::Relaxed);
            }
        }
        self.generation.store(0, Ordering::Relaxed);
    }

    /// Start a new search: older entries become preferred victims.
    pub fn new_search(&self) {
        let g = self.generation.load(Ordering::Relaxed);
        self.generation.store(g.wrapping_add(1) & 63, Ordering::Relaxed);
    }

    #[inline]
    fn cluster(&self, key: u64) -> &Cluster {
        let index = ((key as u128 * self.clusters.len() as u128) >> 64) as usize;
        &self.clusters[index]
    }

    /// Ask the processor to bring `key`'s cluster into the cache (a probe or a store of `key` soon after
    /// finds it there). A hint only: it changes no result.
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            let c: *const Cluster = self.cluster(key);
            // SAFETY: a prefetch reads nothing and cannot fault; the address is a cluster of the table.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(c as *const i8) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = key;
    }

    #[inline]
    pub fn probe(&self, key: u64) -> Option<TtEntry> {
        let c = self.cluster(key);
        for s in &c.slots {
            let check = s[0].load(Ordering::Relaxed);
            let data = s[1].load(Ordering::Relaxed);
            if check ^ data == key && data != 0 {
                return unpack(data);
            }
        }
        None
    }

    #[inline]
    pub fn store(&self, key: u64, move_key: u32, score: i16, depth: u8, bound: Bound) {
        let generation = self.generation.load(Ordering::Relaxed);
        let c = self.cluster(key);
        let mut victim = 0;
        let mut victim_worth = i32::MAX;
        for (i, s) in c.slots.iter().enumerate() {
            let check = s[0].load(Ordering::Relaxed);
            let data = s[1].load(Ordering::Relaxed);
            if data == 0 || check ^ data == key {
                // Same position (or an empty slot): keep a known move if the new result has none, and do not
                // let a shallow non-exact result overwrite a much deeper one.
                let old = if data != 0 { unpack(data) } else { None };
                let move_key = match old {
                    Some(o) if move_key == 0 => o.move_key,
                    _ => move_key,
                };
                if let Some(o) = old
                    && bound != Bound::Exact
                    && o.depth as i32 > depth as i32 + 3
                    && generation_of(data) == generation
                {
                    return;
                }
                let new = pack(move_key, score, depth, bound, generation);
                s[1].store(new, Ordering::Relaxed);
                s[0].store(key ^ new, Ordering::Relaxed);
                return;
            }
            // Worth keeping: depth, minus a heavy penalty for every search it has aged.
            let age = (generation.wrapping_sub(generation_of(data)) & 63) as i32;
            let worth = (data >> 48) as u8 as i32 - 8 * age;
            if worth < victim_worth {
                victim_worth = worth;
                victim = i;
            }
        }
        let new = pack(move_key, score, depth, bound, generation);
        let s = &c.slots[victim];
        s[1].store(new, Ordering::Relaxed);
        s[0].store(key ^ new, Ordering::Relaxed);
    }

    /// Per mille of sampled entries written during the current search.
    pub fn hashfull(&self) -> u32 {
        let generation = self.generation.load(Ordering::Relaxed);
        let sample = self.clusters.len().min(250);
        let mut used = 0;
        for c in &self.clusters[..sample] {
            for s in &c.slots {
                let data = s[1].load(Ordering::Relaxed);
                if data != 0 && generation_of(data) == generation {
                    used += 1;
                }
            }
        }
        if sample == 0 { 0 } else { (used * 1000 / (sample * CLUSTER)) as u32 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_and_probe_round_trip() {
        let tt = TranspositionTable::new(1);
        assert!(tt.probe(0x1234_5678_9abc_def0).is_none());
        tt.store(0x1234_5678_9abc_def0, 77, -321, 9, Bound::Lower);
        let e = tt.probe(0x1234_5678_9abc_def0).expect("stored");
        assert_eq!(e, TtEntry { move_key: 77, score: -321, depth: 9, bound: Bound::Lower });
        assert!(tt.probe(0x1234_5678_9abc_def1).is_none());
    }

    #[test]
    fn keeps_the_move_when_a_result_has_none() {
        let tt = TranspositionTable::new(1);
        tt.store(42, 5, 10, 4, Bound::Exact);
        tt.store(42, 0, 20, 5, Bound::Upper);
        let e = tt.probe(42).expect("stored");
        assert_eq!((e.move_key, e.score, e.depth, e.bound), (5, 20, 5, Bound::Upper));
    }

    #[test]
    fn full_cluster_replaces_the_shallowest() {
        let tt = TranspositionTable::new(0); // one cluster: every key lands in it
        for (i, depth) in [10u8, 2, 7, 9].iter().enumerate() {
            tt.store(100 + i as u64, 1, 0, *depth, Bound::Exact);
        }
        tt.store(200, 1, 0, 5, Bound::Exact);
        assert!(tt.probe(101).is_none(), "the depth-2 entry is the victim");
        assert!(tt.probe(100).is_some() && tt.probe(200).is_some());
        assert!(tt.hashfull() > 0);
        tt.clear();
        assert!(tt.probe(100).is_none());
    }

    #[test]
    fn a_table_of_several_huge_pages_stores_everywhere() {
        let tt = TranspositionTable::new(5);
        #[cfg(target_os = "linux")]
        assert!(matches!(tt.clusters, Clusters::Mapped(_)), "a 5 MiB table is mapped on its own");
        assert_eq!(tt.clusters.len(), 5 * (1 << 20) / 64);
        assert!(tt.clusters.iter().all(|c| c.slots.iter().all(|s| s[1].load(Ordering::Relaxed) == 0)));
        let keys: Vec<u64> = (1..=10_000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
        for (i, &k) in keys.iter().enumerate() {
            tt.prefetch(k);
            tt.store(k, i as u32 + 1, i as i16, 3, Bound::Exact);
        }
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(tt.probe(k).map(|e| e.move_key), Some(i as u32 + 1));
        }
        tt.clear();
        assert!(keys.iter().all(|&k| tt.probe(k).is_none()));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_mapped_table_is_in_memory_before_its_first_store() {
        // The kernel's account of the mapping that holds the table: all of it resident as soon as it is made.
        let tt = TranspositionTable::new(6);
        let address = tt.clusters.as_ptr() as usize;
        let bytes = tt.clusters.len() * std::mem::size_of::<Cluster>();
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut lines = smaps.lines();
        let mut resident_kib = None;
        while let Some(line) = lines.next() {
            let Some((range, _)) = line.split_once(' ') else { continue };
            let Some((from, to)) = range.split_once('-') else { continue };
            let (Ok(from), Ok(to)) = (usize::from_str_radix(from, 16), usize::from_str_radix(to, 16)) else {
                continue;
            };
            if (from..to).contains(&address) {
                let rss = lines.find(|l| l.starts_with("Rss:")).unwrap();
                resident_kib = rss.split_whitespace().nth(1).and_then(|k| k.parse::<usize>().ok());
                break;
            }
        }
        let resident = resident_kib.expect("the table's mapping is listed") * 1024;
        assert!(resident >= bytes, "{resident} bytes resident of the table's {bytes}");
    }
}
