//! Reads an import's stored body from any row on: a cursor over its pieces
//! (`IMPORT_CHUNK_BYTES` each, fetched one at a time, so memory stays flat) that yields one record
//! at a time with the offset where the next begins, the position an import keeps.
//!
//! CSV is read by `csv-core` (RFC 4180: quoted cells may hold commas, quotes and line breaks;
//! records end at CRLF, LF or CR); NDJSON by lines (LF, a CR before it dropped; blank lines
//! skipped but counted). A record longer than `MAX_RECORD_BYTES` ends the import: no real
//! recipient is that large, and holding it would let one file take the node's memory.

use crate::store::tenant::{TenantDb, IMPORT_CHUNK_BYTES};
use crate::store::StoreResult;

/// The longest record (a CSV row, an NDJSON line) an import reads.
pub const MAX_RECORD_BYTES: usize = 4 * 1024 * 1024;

/// What the cursor found.
#[derive(Debug)]
pub enum Record {
    /// A CSV row's cells (each still bytes: a cell that is not UTF-8 rejects its row alone).
    Cells(Vec<Vec<u8>>),
    /// An NDJSON line (without its line end), and how many lines it advanced (blank ones too).
    Line(Vec<u8>, i64),
    /// The body is over.
    End,
}

/// Why reading stopped before the body's end.
#[derive(Debug)]
pub enum ReadError {
    TooLong,
    Store(crate::store::StoreError),
}

impl From<crate::store::StoreError> for ReadError {
    fn from(e: crate::store::StoreError) -> ReadError {
        ReadError::Store(e)
    }
}

pub struct Cursor<'a> {
    db: &'a TenantDb,
    import_id: &'a str,
    /// The bytes fetched and not yet read, from `buf[pos]` on; `buf[0]` is at `base` in the body.
    buf: Vec<u8>,
    pos: usize,
    base: i64,
    next_piece: i64,
    ended: bool,
    csv: csv_core::Reader,
}

impl<'a> Cursor<'a> {
    /// A cursor at `offset` (the start of a record) of import `import_id`'s body.
    pub async fn open(db: &'a TenantDb, import_id: &'a str, offset: i64) -> StoreResult<Cursor<'a>> {
        let piece = offset / IMPORT_CHUNK_BYTES as i64;
        let mut cursor = Cursor {
            db,
            import_id,
            buf: Vec::new(),
            pos: 0,
            base: piece * IMPORT_CHUNK_BYTES as i64,
            next_piece: piece,
            ended: false,
            csv: csv_core::Reader::new(),
        };
        cursor.fetch().await?;
        cursor.pos = (offset - cursor.base) as usize;
        Ok(cursor)
    }

    /// Where the next record starts in the body.
    pub fn offset(&self) -> i64 {
        self.base + self.pos as i64
    }

    /// Appends the next piece; false at the body's end.
    async fn fetch(&mut self) -> StoreResult<bool> {
        if self.ended {
            return Ok(false);
        }
        // What was read is dropped first, so the buffer holds one piece and the record it ends in.
        self.buf.drain(..self.pos);
        self.base += self.pos as i64;
        self.pos = 0;
        match self.db.import_chunk(self.import_id, self.next_piece).await? {
            Some(piece) => {
                self.buf.extend_from_slice(&piece);
                self.next_piece += 1;
                Ok(true)
            }
            None => {
                self.ended = true;
                Ok(false)
            }
        }
    }

    /// The next CSV row.
    pub async fn next_csv(&mut self) -> Result<Record, ReadError> {
        let (mut out, mut ends) = (vec![0u8; 1024], vec![0usize; 32]);
        let (mut written, mut fields) = (0, 0);
        loop {
            if self.pos == self.buf.len() && !self.ended {
                self.fetch().await?;
            }
            let input = &self.buf[self.pos..];
            let (result, read, wrote, ended) = self.csv.read_record(input, &mut out[written..], &mut ends[fields..]);
            // Field ends count from the record's start, whatever call wrote them (csv-core's rule).
            self.pos += read;
            written += wrote;
            fields += ended;
            match result {
                csv_core::ReadRecordResult::InputEmpty => {
                    if written > MAX_RECORD_BYTES {
                        return Err(ReadError::TooLong);
                    }
                }
                csv_core::ReadRecordResult::OutputFull => {
                    if out.len() > MAX_RECORD_BYTES {
                        return Err(ReadError::TooLong);
                    }
                    out.resize(out.len() * 2, 0);
                }
                csv_core::ReadRecordResult::OutputEndsFull => ends.resize(ends.len() * 2, 0),
                csv_core::ReadRecordResult::Record => {
                    let mut cells = Vec::with_capacity(fields);
                    let mut start = 0;
                    for end in &ends[..fields] {
                        cells.push(out[start..*end].to_vec());
                        start = *end;
                    }
                    return Ok(Record::Cells(cells));
                }
                csv_core::ReadRecordResult::End => return Ok(Record::End),
            }
        }
    }

    /// The next non-blank NDJSON line.
    pub async fn next_line(&mut self) -> Result<Record, ReadError> {
        let mut lines = 0;
        loop {
            let rest = &self.buf[self.pos..];
            let line = match rest.iter().position(|b| *b == b'\n') {
                Some(at) => {
                    let line = rest[..at].to_vec();
                    self.pos += at + 1;
                    line
                }
                None if rest.len() > MAX_RECORD_BYTES => return Err(ReadError::TooLong),
                None if !self.ended => {
                    self.fetch().await?;
                    continue;
                }
                None if rest.is_empty() => return Ok(Record::End),
                None => {
                    let line = rest.to_vec();
                    self.pos = self.buf.len();
                    line
                }
            };
            lines += 1;
            let line = line.strip_suffix(b"\r").map(<[u8]>::to_vec).unwrap_or(line);
            if !line.iter().all(u8::is_ascii_whitespace) {
                return Ok(Record::Line(line, lines));
            }
        }
    }
}
