//! The bounded in-memory front of the store: a CLOCK cache (second-chance approximation of LRU).
//!
//! Entries live in a fixed ring of at most `capacity` slots; a hit sets the entry's reference bit; to make room
//! the hand sweeps the ring, clearing reference bits, and evicts the first entry whose bit is already clear.
//! Every operation is O(1) amortised, and the map and the ring never grow past `capacity`. The caller guards it
//! with a `Mutex`; nothing here blocks or allocates without bound.

use std::collections::HashMap;
use std::hash::Hash;

struct Slot<K, V> {
    key: K,
    value: V,
    referenced: bool,
}

pub(crate) struct ClockCache<K, V> {
    capacity: usize,
    map: HashMap<K, usize>,
    slots: Vec<Option<Slot<K, V>>>,
    /// Indices of empty slots (entries removed explicitly).
    free: Vec<usize>,
    hand: usize,
}

impl<K: Clone + Eq + Hash, V> ClockCache<K, V> {
    /// A cache of at most `capacity` entries; 0 keeps nothing.
    pub(crate) fn new(capacity: usize) -> Self {
        ClockCache { capacity, map: HashMap::new(), slots: Vec::new(), free: Vec::new(), hand: 0 }
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// The value for `key`, marking it recently used.
    pub(crate) fn get(&mut self, key: &K) -> Option<&V> {
        let index = *self.map.get(key)?;
        let slot = self.slots.get_mut(index)?.as_mut()?;
        slot.referenced = true;
        Some(&slot.value)
    }

    /// Store `value` under `key` unless an entry is already there and `replace(old)` says to keep it.
    /// Returns whether `value` was stored.
    pub(crate) fn insert_if(&mut self, key: K, value: V, replace: impl FnOnce(&V) -> bool) -> bool {
        if self.capacity == 0 {
            return false;
        }
        if let Some(&index) = self.map.get(&key)
            && let Some(slot) = self.slots.get_mut(index).and_then(Option::as_mut)
        {
            if !replace(&slot.value) {
                return false;
            }
            slot.value = value;
            slot.referenced = true;
            return true;
        }
        let index = if let Some(index) = self.free.pop() {
            index
        } else if self.slots.len() < self.capacity {
            self.slots.push(None);
            self.slots.len() - 1
        } else {
            self.evict()
        };
        self.slots[index] = Some(Slot { key: key.clone(), value, referenced: false });
        self.map.insert(key, index);
        true
    }

    /// Forget `key`; returns whether it was there.
    pub(crate) fn remove(&mut self, key: &K) -> bool {
        match self.map.remove(key) {
            Some(index) => {
                self.slots[index] = None;
                self.free.push(index);
                true
            }
            None => false,
        }
    }

    /// Remove `key` when `when(value)` holds.
    pub(crate) fn remove_if(&mut self, key: &K, when: impl FnOnce(&V) -> bool) -> bool {
        let Some(&index) = self.map.get(key) else { return false };
        match self.slots.get(index).and_then(Option::as_ref) {
            Some(slot) if when(&slot.value) => self.remove(key),
            _ => false,
        }
    }

    pub(crate) fn clear(&mut self) {
        self.map.clear();
        self.slots.clear();
        self.free.clear();
        self.hand = 0;
    }

    /// Empty one slot of the full ring and return its index. Terminates within two sweeps: the first clears
    /// every reference bit it passes.
    fn evict(&mut self) -> usize {
        let ring = self.slots.len();
        loop {
            let index = self.hand;
            self.hand = (self.hand + 1) % ring;
            match &mut self.slots[index] {
                Some(slot) if slot.referenced => slot.referenced = false,
                Some(slot) => {
                    self.map.remove(&slot.key);
                    self.slots[index] = None;
                    return index;
                }
                None => return index,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ClockCache;

    #[test]
    fn never_holds_more_than_capacity() {
        let mut cache = ClockCache::new(8);
        for i in 0..1000u32 {
            assert!(cache.insert_if(i, i, |_| true));
            assert!(cache.len() <= 8);
            assert!(cache.slots.len() <= 8);
        }
        assert_eq!(cache.len(), 8);
        // The most recent insertion is always present.
        assert_eq!(cache.get(&999), Some(&999));
    }

    #[test]
    fn referenced_entries_get_a_second_chance() {
        let mut cache = ClockCache::new(3);
        for i in 0..3u32 {
            cache.insert_if(i, i, |_| true);
        }
        // 0 is hot; 1 and 2 are not: the next two insertions evict 1 and 2, not 0.
        assert!(cache.get(&0).is_some());
        cache.insert_if(3, 3, |_| true);
        cache.insert_if(4, 4, |_| true);
        assert!(cache.get(&0).is_some());
        assert!(cache.get(&1).is_none());
        assert!(cache.get(&2).is_none());
        assert!(cache.get(&3).is_some());
        assert!(cache.get(&4).is_some());
    }

    #[test]
    fn replace_rule_is_respected() {
        let mut cache = ClockCache::new(4);
        assert!(cache.insert_if("k", 10, |_| true));
        assert!(!cache.insert_if("k", 5, |old| 5 > *old));
        assert_eq!(cache.get(&"k"), Some(&10));
        assert!(cache.insert_if("k", 12, |old| 12 > *old));
        assert_eq!(cache.get(&"k"), Some(&12));
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn removal_frees_a_slot() {
        let mut cache = ClockCache::new(2);
        cache.insert_if(1, 1, |_| true);
        cache.insert_if(2, 2, |_| true);
        assert!(!cache.remove_if(&1, |v| *v > 1));
        assert!(cache.remove_if(&1, |v| *v == 1));
        assert!(!cache.remove(&1));
        assert_eq!(cache.len(), 1);
        cache.insert_if(3, 3, |_| true);
        // The freed slot was reused: 2 was not evicted.
        assert_eq!(cache.get(&2), Some(&2));
        assert_eq!(cache.get(&3), Some(&3));
        assert_eq!(cache.slots.len(), 2);
        cache.clear();
        assert_eq!(cache.len(), 0);
        assert!(cache.insert_if(4, 4, |_| true));
    }

    #[test]
    fn zero_capacity_keeps_nothing() {
        let mut cache = ClockCache::new(0);
        assert!(!cache.insert_if(1, 1, |_| true));
        assert_eq!(cache.len(), 0);
        assert!(cache.get(&1).is_none());
    }
}
