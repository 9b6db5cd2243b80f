//! `URLItem` as one line of protobuf JSON: what `mgz frontier dump` writes and
//! `mgz frontier put` reads back.
//!
//! The mapping is proto3's canonical JSON, as the reference Java client prints
//! it (`JsonFormat`): lowerCamelCase names (`crawlID`, `refetchableFromDate`,
//! `creationDate`), 64-bit integers as strings, default values left out, and
//! metadata as `{"name": {"values": [...]}}`. Reading accepts the proto field
//! names too and integers written as numbers, so dumps from either side load.
//!
//! ```text
//! {"known":{"info":{"url":"http://a.com/x","key":"a.com","crawlID":"DEFAULT",
//!   "metadata":{"depth":{"values":["1"]}}},"refetchableFromDate":"1767225600"},
//!  "creationDate":"1767225600"}
//! ```

use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::ServiceError;
use crate::proto::{DiscoveredUrlItem, KnownUrlItem, StringList, UrlInfo, UrlItem, url_item};

/// One JSON line (no newline) for `item`.
pub fn to_line(item: &UrlItem) -> String {
    let mut obj = Map::new();
    match &item.item {
        Some(url_item::Item::Discovered(d)) => {
            obj.insert(
                "discovered".into(),
                json!({ "info": info_json(d.info.as_ref()) }),
            );
        }
        Some(url_item::Item::Known(k)) => {
            let mut known = Map::new();
            known.insert("info".into(), info_json(k.info.as_ref()));
            if k.refetchable_from_date != 0 {
                known.insert(
                    "refetchableFromDate".into(),
                    k.refetchable_from_date.to_string().into(),
                );
            }
            obj.insert("known".into(), known.into());
        }
        None => {}
    }
    if !item.id.is_empty() {
        obj.insert("ID".into(), item.id.clone().into());
    }
    if item.creation_date != 0 {
        obj.insert("creationDate".into(), item.creation_date.to_string().into());
    }
    Value::Object(obj).to_string()
}

fn info_json(info: Option<&UrlInfo>) -> Value {
    let mut obj = Map::new();
    let Some(info) = info else {
        return Value::Object(obj);
    };
    for (name, value) in [
        ("url", &info.url),
        ("key", &info.key),
        ("crawlID", &info.crawl_id),
    ] {
        if !value.is_empty() {
            obj.insert(name.into(), value.clone().into());
        }
    }
    if !info.metadata.is_empty() {
        let mut names: Vec<_> = info.metadata.iter().collect();
        names.sort_by(|a, b| a.0.cmp(b.0));
        let meta: Map<String, Value> = names
            .into_iter()
            .map(|(k, v)| (k.clone(), json!({ "values": v.values })))
            .collect();
        obj.insert("metadata".into(), meta.into());
    }
    Value::Object(obj)
}

/// Parses one JSON line into a `URLItem`.
pub fn from_line(line: &str) -> Result<UrlItem, ServiceError> {
    let value: Value = serde_json::from_str(line).map_err(|e| bad(&format!("not JSON: {e}")))?;
    let obj = value.as_object().ok_or_else(|| bad("not a JSON object"))?;
    let item = if let Some(d) = obj.get("discovered") {
        Some(url_item::Item::Discovered(DiscoveredUrlItem {
            info: Some(info_from(field(d, &["info"]))?),
        }))
    } else if let Some(k) = obj.get("known") {
        let date = uint(field(k, &["refetchableFromDate", "refetchable_from_date"]))?;
        let info = Some(info_from(field(k, &["info"]))?);
        Some(url_item::Item::Known(KnownUrlItem {
            info,
            refetchable_from_date: date,
        }))
    } else {
        return Err(bad("neither \"discovered\" nor \"known\""));
    };
    Ok(UrlItem {
        item,
        id: string(obj.get("ID"))?,
        creation_date: uint(field(&value, &["creationDate", "creation_date"]))?,
    })
}

fn info_from(v: Option<&Value>) -> Result<UrlInfo, ServiceError> {
    let Some(v) = v else {
        return Err(bad("missing \"info\""));
    };
    let mut metadata = HashMap::new();
    if let Some(meta) = field(v, &["metadata"]) {
        let meta = meta
            .as_object()
            .ok_or_else(|| bad("metadata is not an object"))?;
        for (name, list) in meta {
            let values = field(list, &["values"])
                .and_then(Value::as_array)
                .map(Vec::as_slice);
            let values = values
                .unwrap_or_default()
                .iter()
                .map(|s| string(Some(s)))
                .collect::<Result<_, _>>()?;
            metadata.insert(name.clone(), StringList { values });
        }
    }
    let url = string(field(v, &["url"]))?;
    if url.is_empty() {
        return Err(bad("missing \"url\""));
    }
    Ok(UrlInfo {
        url,
        key: string(field(v, &["key"]))?,
        metadata,
        crawl_id: string(field(v, &["crawlID", "crawl_id"]))?,
    })
}

fn field<'a>(v: &'a Value, names: &[&str]) -> Option<&'a Value> {
    names.iter().find_map(|n| v.get(*n))
}

fn string(v: Option<&Value>) -> Result<String, ServiceError> {
    match v {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(bad(&format!("expected a string, got {other}"))),
    }
}

fn uint(v: Option<&Value>) -> Result<u64, ServiceError> {
    match v {
        None | Some(Value::Null) => Ok(0),
        Some(Value::String(s)) => s
            .parse()
            .map_err(|_| bad(&format!("not an integer: {s:?}"))),
        Some(Value::Number(n)) => n.as_u64().ok_or_else(|| bad(&format!("not a u64: {n}"))),
        Some(other) => Err(bad(&format!("expected an integer, got {other}"))),
    }
}

fn bad(msg: &str) -> ServiceError {
    ServiceError::InvalidArgument(format!("URLItem JSON: {msg}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> UrlItem {
        let mut metadata = HashMap::new();
        metadata.insert(
            "depth".to_owned(),
            StringList {
                values: vec!["1".into(), "x\"y".into()],
            },
        );
        let info = UrlInfo {
            url: "http://a.com/x".into(),
            key: "a.com".into(),
            metadata,
            crawl_id: "DEFAULT".into(),
        };
        UrlItem {
            item: Some(url_item::Item::Known(KnownUrlItem {
                info: Some(info),
                refetchable_from_date: 1_767_225_600,
            })),
            id: String::new(),
            creation_date: 1_767_000_000,
        }
    }

    #[test]
    fn round_trips_and_uses_the_canonical_names() {
        let line = to_line(&sample());
        assert!(
            line.contains("\"refetchableFromDate\":\"1767225600\""),
            "{line}"
        );
        assert!(line.contains("\"crawlID\":\"DEFAULT\""), "{line}");
        assert_eq!(from_line(&line).unwrap(), sample());
    }

    #[test]
    fn completed_items_leave_the_date_out_and_read_back_as_zero() {
        let mut item = sample();
        if let Some(url_item::Item::Known(k)) = &mut item.item {
            k.refetchable_from_date = 0;
        }
        let line = to_line(&item);
        assert!(!line.contains("refetchable"));
        assert_eq!(from_line(&line).unwrap(), item);
    }

    #[test]
    fn reads_proto_names_and_numeric_integers() {
        let line = r#"{"known":{"info":{"url":"http://b.com/","crawl_id":"C"},"refetchable_from_date":5},"ID":"i"}"#;
        let item = from_line(line).unwrap();
        assert_eq!(item.id, "i");
        let Some(url_item::Item::Known(k)) = item.item else {
            panic!()
        };
        assert_eq!(
            (k.refetchable_from_date, k.info.unwrap().crawl_id.as_str()),
            (5, "C")
        );
    }

    #[test]
    fn malformed_lines_are_typed_errors() {
        for line in [
            "",
            "[]",
            "{}",
            "{\"known\":{}}",
            "{\"discovered\":{\"info\":{\"url\":7}}}",
            "{\"known\":{\"info\":{\"url\":\"u\"},\"refetchableFromDate\":\"-1\"}}",
            "{\"discovered\":{\"info\":{\"url\":\"u\",\"metadata\":{\"a\":{\"values\":[1]}}}}}",
        ] {
            assert!(
                matches!(from_line(line), Err(ServiceError::InvalidArgument(_))),
                "{line}"
            );
        }
    }
}
