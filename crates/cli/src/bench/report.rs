//! One result row per backend, printed as JSON lines or as a table with
//! ratios against `hash` (the seeds' baseline) from the same run.

use serde::Serialize;

/// What `mgz bench seen` reports for one backend (the `--json` keys).
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// Backend name.
    pub backend: String,
    /// Input lines used (canonicalised, duplicates included).
    pub urls: usize,
    /// Distinct keys among them (exact).
    pub unique: usize,
    /// Highest allocator bytes held while inserting, above the start.
    pub peak_bytes: usize,
    /// Allocator bytes held after all inserts, above the start.
    pub final_bytes: usize,
    /// `final_bytes / unique`.
    pub bytes_per_url: f64,
    /// Mean nanoseconds per insert (per input URL).
    pub ns_insert: f64,
    /// Mean nanoseconds per lookup.
    pub ns_lookup: f64,
    /// Absent probes reported present.
    pub false_positives: usize,
    /// Present probes reported absent.
    pub false_negatives: usize,
}

/// Prints one JSON object per line.
pub fn print_json(rows: &[Row]) -> anyhow::Result<()> {
    for r in rows {
        println!("{}", serde_json::to_string(r)?);
    }
    Ok(())
}

/// Prints a Markdown table; ratio columns compare with `hash` when it ran.
pub fn print_table(rows: &[Row]) {
    let base = rows.iter().find(|r| r.backend == "hash");
    println!(
        "| backend | unique | peak MB | B/URL | ns/insert | ns/lookup | FP | FN | B/URL vs hash | insert vs hash |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let ratio = |x: f64, b: Option<f64>| b.map_or("-".into(), |b| format!("{:.3}", x / b));
        println!(
            "| {} | {} | {:.1} | {:.2} | {:.0} | {:.0} | {} | {} | {} | {} |",
            r.backend,
            r.unique,
            r.peak_bytes as f64 / 1e6,
            r.bytes_per_url,
            r.ns_insert,
            r.ns_lookup,
            r.false_positives,
            r.false_negatives,
            ratio(r.bytes_per_url, base.map(|b| b.bytes_per_url)),
            ratio(r.ns_insert, base.map(|b| b.ns_insert)),
        );
    }
}
