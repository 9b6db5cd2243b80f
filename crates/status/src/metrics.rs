//! Prometheus text exposition of the totals.
//!
//! Never a label per host or URL: a crawl touches millions of them, and each
//! label value is a new time series in the scraper.

use std::fmt::Write;

use crate::StatusReport;

/// Renders `report` in the Prometheus text format (version 0.0.4).
pub fn render_prometheus(report: &StatusReport) -> String {
    let mut out = String::with_capacity(2048);
    let t = &report.totals;
    let counters = [
        ("mgz_pages_fetched_total", "Pages fetched.", t.fetched),
        ("mgz_urls_completed_total", "URLs completed.", t.completed),
        (
            "mgz_robots_excluded_total",
            "URLs excluded by robots.txt.",
            t.robots_excluded,
        ),
        (
            "mgz_duplicates_avoided_total",
            "Links the seen-set knew.",
            t.duplicates_avoided,
        ),
    ];
    for (name, help, value) in counters {
        metric(&mut out, name, help, "counter", value as f64);
    }
    let gauges = [
        ("mgz_urls_queued", "URLs waiting.", t.queued as f64),
        (
            "mgz_urls_in_flight",
            "URLs leased, not completed.",
            t.in_flight as f64,
        ),
        (
            "mgz_seen_urls",
            "Distinct URLs in the seen-set.",
            report.seen.urls as f64,
        ),
        (
            "mgz_seen_bytes",
            "Heap bytes of the seen-set.",
            report.seen.bytes as f64,
        ),
        (
            "mgz_rss_bytes",
            "Resident set size.",
            report.rss_bytes as f64,
        ),
        (
            "mgz_pages_per_second_1m",
            "Pages/s over the last minute.",
            report.rates.pages_per_s_1m,
        ),
    ];
    for (name, help, value) in gauges {
        metric(&mut out, name, help, "gauge", value);
    }
    let _ = writeln!(
        out,
        "# HELP mgz_errors_total Errors by kind.\n# TYPE mgz_errors_total counter"
    );
    for (kind, n) in &t.errors {
        let kind: String = kind
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let _ = writeln!(out, "mgz_errors_total{{kind=\"{kind}\"}} {n}");
    }
    out
}

fn metric(out: &mut String, name: &str, help: &str, kind: &str, value: f64) {
    let _ = writeln!(
        out,
        "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sample_line_is_name_value_and_kinds_are_sanitised() {
        let mut r = StatusReport::default();
        r.totals.fetched = 42;
        r.totals.errors.insert("http\"5xx\n".into(), 2);
        let text = render_prometheus(&r);
        assert!(text.contains("mgz_pages_fetched_total 42\n"));
        assert!(text.contains("mgz_errors_total{kind=\"http5xx\"} 2\n"));
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (name, value) = line.rsplit_once(' ').unwrap();
            assert!(name.starts_with("mgz_"), "{line}");
            assert!(value.parse::<f64>().is_ok(), "{line}");
        }
    }
}
