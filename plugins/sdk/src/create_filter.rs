//! A `serde` adapter that decodes an object while dropping its top-level `status` and forcing
//! `metadata.generation = 1`, equivalent to editing the parsed `Value` first. It accepts only a
//! top-level JSON object whose `metadata`, if present, is an object or `null`; anything else is
//! an error (the caller then takes the reference path).
//! Used by [`crate::glue`]'s prepare-for-create and create-sequence (a fast path beside the
//! reference decode, which gives the same results and messages).

use serde::de::value::{BorrowedStrDeserializer, StringDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use std::fmt;

/// What to do while decoding.
#[derive(Clone, Copy)]
pub(crate) struct Filter {
    pub drop_status: bool,
    pub set_generation: bool,
}

/// Decode `text` as `T` through the filter (trailing characters are an error, as in
/// `serde_json::from_str`).
pub(crate) fn decode<T: de::DeserializeOwned>(
    text: &str,
    filter: Filter,
) -> Result<T, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    let v = T::deserialize(Top {
        inner: &mut de,
        filter,
    })?;
    de.end()?;
    Ok(v)
}

/// A map key as read, borrowed from the input when it has no escapes.
enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }
}

struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key<'de>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Key<'de>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
        Ok(Key::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
        Ok(Key::Owned(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
        Ok(Key::Owned(v))
    }
}

/// Hand a key already read to the caller's key seed.
fn give_key<'de, K: DeserializeSeed<'de>, E: de::Error>(
    seed: K,
    key: Key<'de>,
) -> Result<K::Value, E> {
    match key {
        Key::Borrowed(s) => seed.deserialize(BorrowedStrDeserializer::<E>::new(s)),
        Key::Owned(s) => seed.deserialize(StringDeserializer::<E>::new(s)),
    }
}

/// The top level: must be a map.
struct Top<D> {
    inner: D,
    filter: Filter,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Top<D> {
    type Error = D::Error;
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_any(TopVisitor {
            visitor,
            filter: self.filter,
        })
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

struct TopVisitor<V> {
    visitor: V,
    filter: Filter,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for TopVisitor<V> {
    type Value = V::Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(TopMap {
            inner: map,
            filter: self.filter,
            metadata_next: false,
        })
    }
}

struct TopMap<A> {
    inner: A,
    filter: Filter,
    metadata_next: bool,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for TopMap<A> {
    type Error = A::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(key) = self.inner.next_key_seed(KeySeed)? else {
                return Ok(None);
            };
            match key.as_str() {
                "status" if self.filter.drop_status => {
                    self.inner.next_value::<IgnoredAny>()?;
                }
                k => {
                    self.metadata_next = self.filter.set_generation && k == "metadata";
                    return give_key(seed, key).map(Some);
                }
            }
        }
    }
    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        if std::mem::take(&mut self.metadata_next) {
            self.inner.next_value_seed(MetaSeed(seed))
        } else {
            self.inner.next_value_seed(seed)
        }
    }
    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// The value of `metadata`: an object gets `generation: 1`; `null` stays `null`.
struct MetaSeed<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for MetaSeed<S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Meta { inner: d })
    }
}

struct Meta<D> {
    inner: D,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Meta<D> {
    type Error = D::Error;
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_any(MetaVisitor { visitor })
    }
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.inner.deserialize_option(MetaOptionVisitor { visitor })
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

struct MetaOptionVisitor<V> {
    visitor: V,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for MetaOptionVisitor<V> {
    type Value = V::Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an optional object")
    }
    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_none()
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_some(Meta { inner: d })
    }
}

struct MetaVisitor<V> {
    visitor: V,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for MetaVisitor<V> {
    type Value = V::Value;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(MetaMap {
            inner: map,
            state: Generation::NotSeen,
        })
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Generation {
    /// No `generation` key yet.
    NotSeen,
    /// The input's `generation` key was handed out: its value is skipped and 1 given.
    Replace,
    /// The input had `generation` (already replaced).
    Seen,
    /// The input ended without `generation`: the key was appended, its value is 1.
    Append,
    /// The appended entry was given; the map is over.
    Done,
}

struct MetaMap<A> {
    inner: A,
    state: Generation,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for MetaMap<A> {
    type Error = A::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        if self.state == Generation::Done {
            return Ok(None);
        }
        match self.inner.next_key_seed(KeySeed)? {
            Some(key) => {
                if key.as_str() == "generation" {
                    self.state = Generation::Replace;
                }
                give_key(seed, key).map(Some)
            }
            None if self.state == Generation::NotSeen => {
                self.state = Generation::Append;
                give_key(seed, Key::Borrowed("generation")).map(Some)
            }
            None => {
                self.state = Generation::Done;
                Ok(None)
            }
        }
    }
    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        match self.state {
            Generation::Replace => {
                self.inner.next_value::<IgnoredAny>()?;
                self.state = Generation::Seen;
            }
            Generation::Append => self.state = Generation::Done,
            _ => return self.inner.next_value_seed(seed),
        }
        seed.deserialize(One(std::marker::PhantomData::<A::Error>))
    }
}

/// The JSON number `1`, as `serde_json` hands it out (also into an `Option`).
struct One<E>(std::marker::PhantomData<E>);

impl<'de, E: de::Error> Deserializer<'de> for One<E> {
    type Error = E;
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        visitor.visit_u64(1)
    }
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        visitor.visit_some(self)
    }
    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}
