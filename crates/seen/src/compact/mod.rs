//! `compact`: exact, dynamic, enumerable set (work in progress).
