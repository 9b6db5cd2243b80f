//! Top terms of a page's visible text: lowercase words of 3–30 letters or
//! digits (not all digits), English stopwords removed, ranked by count then
//! alphabetically. Cost: one pass and a map of distinct words (bounded by the
//! text cap of the extractor).

use std::collections::HashMap;

/// English stopwords (function words and very common verbs).
const STOPWORDS: &[&str] = &[
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "also",
    "and",
    "any",
    "are",
    "aren",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "can",
    "cannot",
    "could",
    "did",
    "does",
    "doing",
    "don",
    "down",
    "during",
    "each",
    "else",
    "etc",
    "even",
    "ever",
    "every",
    "few",
    "for",
    "from",
    "further",
    "get",
    "got",
    "had",
    "has",
    "have",
    "having",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "however",
    "into",
    "isn",
    "its",
    "itself",
    "just",
    "let",
    "like",
    "made",
    "make",
    "many",
    "may",
    "more",
    "most",
    "much",
    "must",
    "myself",
    "never",
    "nor",
    "not",
    "now",
    "off",
    "once",
    "one",
    "only",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "same",
    "see",
    "she",
    "should",
    "since",
    "some",
    "still",
    "such",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "too",
    "under",
    "until",
    "upon",
    "use",
    "used",
    "using",
    "very",
    "was",
    "wasn",
    "way",
    "were",
    "weren",
    "what",
    "when",
    "where",
    "whether",
    "which",
    "while",
    "who",
    "whom",
    "whose",
    "why",
    "will",
    "with",
    "within",
    "without",
    "won",
    "would",
    "yet",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// The `n` most frequent content words of `text`.
pub fn top_terms(text: &str, n: usize) -> Vec<String> {
    let mut counts: HashMap<String, u32> = HashMap::new();
    for word in text.split(|c: char| !c.is_alphanumeric()) {
        let chars = word.chars().count();
        if !(3..=30).contains(&chars) || word.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let lower: std::borrow::Cow<'_, str> = if word.chars().any(char::is_uppercase) {
            word.to_lowercase().into()
        } else {
            word.into()
        };
        if is_stopword(&lower) {
            continue;
        }
        match counts.get_mut(lower.as_ref()) {
            Some(n) => *n += 1,
            None => {
                counts.insert(lower.into_owned(), 1);
            }
        }
    }
    let mut ranked: Vec<(String, u32)> = counts.into_iter().collect();
    ranked.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked.into_iter().take(n).map(|(w, _)| w).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_sorted() {
        assert!(STOPWORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn ranks_content_words() {
        let t = "The crawler and the frontier: crawler, CRAWLER, frontier; the 2024 a of";
        assert_eq!(top_terms(t, 5), ["crawler", "frontier"]);
        assert!(top_terms("", 5).is_empty());
        assert_eq!(top_terms("Zürich zürich Ünïcode", 1), ["zürich"]);
    }
}
