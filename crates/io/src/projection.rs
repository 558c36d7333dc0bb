//! Choosing which of a file's columns to read: maps the requested names (or
//! all columns) to the file's column positions, refusing unknown, repeated
//! and ambiguous names.
//!
//! It deliberately knows nothing about formats or types; each reader asks it
//! for positions and then reads only those.

use crate::error::{IoError, Result};

/// The positions (into `available`) of the columns to read, in the order the
/// table will hold them: the requested order, or file order when `requested`
/// is `None`.
pub(crate) fn resolve(available: &[String], requested: Option<&[String]>) -> Result<Vec<usize>> {
    match requested {
        None => {
            for (index, name) in available.iter().enumerate() {
                if available[..index].contains(name) {
                    return Err(IoError::DuplicateColumn {
                        column: name.clone(),
                        context: "appears more than once in the file; request the columns to read by name",
                    });
                }
            }
            Ok((0..available.len()).collect())
        }
        Some(requested) => requested
            .iter()
            .enumerate()
            .map(|(index, name)| {
                if requested[..index].contains(name) {
                    return Err(IoError::DuplicateColumn {
                        column: name.clone(),
                        context: "is requested twice",
                    });
                }
                position_of(available, name)
            })
            .collect(),
    }
}

fn position_of(available: &[String], name: &str) -> Result<usize> {
    let mut matches = available
        .iter()
        .enumerate()
        .filter(|(_, candidate)| candidate.as_str() == name)
        .map(|(index, _)| index);
    let first = matches.next().ok_or_else(|| IoError::ColumnNotFound {
        column: name.to_string(),
        available: available.to_vec(),
    })?;
    if matches.next().is_some() {
        return Err(IoError::DuplicateColumn {
            column: name.to_string(),
            context: "appears more than once in the file, so the request is ambiguous",
        });
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|name| name.to_string()).collect()
    }

    #[test]
    fn all_columns_in_file_order() {
        assert_eq!(resolve(&names(&["a", "b"]), None).unwrap(), vec![0, 1]);
        assert!(resolve(&[], None).unwrap().is_empty());
    }

    #[test]
    fn requested_columns_in_requested_order() {
        let available = names(&["a", "b", "c"]);
        let requested = names(&["c", "a"]);
        assert_eq!(resolve(&available, Some(&requested)).unwrap(), vec![2, 0]);
    }

    #[test]
    fn unknown_repeated_and_ambiguous_names_are_refused() {
        let available = names(&["a", "b", "a"]);
        let message = resolve(&available, Some(&names(&["z"])))
            .unwrap_err()
            .to_string();
        assert!(
            message.contains("\"z\" not found") && message.contains("a, b, a"),
            "{message}"
        );
        let message = resolve(&available, Some(&names(&["b", "b"])))
            .unwrap_err()
            .to_string();
        assert!(message.contains("requested twice"), "{message}");
        let message = resolve(&available, Some(&names(&["a"])))
            .unwrap_err()
            .to_string();
        assert!(message.contains("ambiguous"), "{message}");
        assert!(resolve(&available, None).is_err());
        assert_eq!(resolve(&available, Some(&names(&["b"]))).unwrap(), vec![1]);
    }
}
