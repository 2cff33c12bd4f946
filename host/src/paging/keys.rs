//! The stored form of a selection: ascending recipient keys in chunks of `CHUNK` keys, each chunk
//! delta-encoded as LEB128 varints (a dense selection costs about one byte a key).

/// Keys per stored chunk. A page (at most 1000 items) spans at most two chunks.
pub const CHUNK: usize = 1000;

pub fn encode(keys: &[i64]) -> Vec<u8> {
    let mut out = Vec::with_capacity(keys.len() * 2);
    let mut previous = 0i64;
    for &k in keys {
        let mut delta = (k - previous) as u64;
        previous = k;
        loop {
            let byte = (delta & 0x7f) as u8;
            delta >>= 7;
            if delta == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
    }
    out
}

/// Decodes a chunk; `None` when the bytes are not a valid encoding.
pub fn decode(bytes: &[u8]) -> Option<Vec<i64>> {
    let mut keys = Vec::with_capacity(CHUNK);
    let mut previous = 0i64;
    let mut delta = 0u64;
    let mut shift = 0u32;
    for &b in bytes {
        if shift > 63 {
            return None;
        }
        delta |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            previous = previous.checked_add(delta as i64)?;
            keys.push(previous);
            delta = 0;
            shift = 0;
        } else {
            shift += 7;
        }
    }
    (shift == 0).then_some(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for keys in [vec![], vec![1], vec![1, 2, 3, 1000, 1_000_000, i64::MAX / 2], (1..=CHUNK as i64).collect()] {
            assert_eq!(decode(&encode(&keys)), Some(keys));
        }
        assert_eq!(encode(&(1..=1000).collect::<Vec<_>>()).len(), 1000, "dense keys take a byte each");
        assert_eq!(decode(&[0x80]), None);
    }
}
