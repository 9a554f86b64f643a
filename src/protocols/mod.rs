//! Legacy engine protocols as transport-free state machines.
