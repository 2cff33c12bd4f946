//! Paged responses (`objectResponse=true`) of the Recipients collection.
//!
//! The first call freezes the selection (its `filter` applies then, and only then) as a document
//! and answers its first page; later calls name the document with `documentId`. The answer:
//!
//! ```json
//! {"links": [{"rel": "first", "href": "/recipients?objectResponse=true&documentId=..&pageStart=1&pageSize=1000"},
//!            {"rel": "self", ...}, {"rel": "next", ...}, {"rel": "last", ...}],
//!  "content": [{"personData": {...}}, ...],
//!  "page": {"documentId": "..", "pageStart": 1, "pageSize": 1000, "number": 1,
//!           "totalElements": 4711, "totalPages": 5}}
//! ```
//!
//! `prev` and `next` appear only when there is such a page. `number` is the current page (1-based,
//! on the grid of `pageStart` and `pageSize`), `totalElements` the document's size. A document
//! holds recipients, not copies: a page shows their current data, and skips recipients deleted
//! since the document was made.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::RngCore;
use serde::Deserialize;
use serde_json::Value as Json;

use super::json::recipient_json;
use crate::http::error::{ApiError, ApiResult};
use crate::http::openapi::schemas as s;
use crate::http::{filter_condition, ApiContext};
use crate::paging::{neighbours, PageRequest, MAX_PAGE_SIZE};
use crate::tenants::Tenant;

/// The query of `GET /recipients`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CollectionQuery {
    pub filter: Option<String>,
    object_response: Option<String>,
    page_start: Option<String>,
    page_size: Option<String>,
    document_id: Option<String>,
}

impl CollectionQuery {
    /// Whether the paged format is asked for (`documentId` implies it).
    pub fn is_paged(&self) -> ApiResult<bool> {
        match self.object_response.as_deref() {
            None | Some("false") => Ok(self.document_id.is_some()),
            Some("true") => Ok(true),
            Some(other) => Err(ApiError::bad(format!("objectResponse must be true or false, not '{other}'"))),
        }
    }

    fn page(&self) -> ApiResult<PageRequest> {
        let number = |name: &str, text: Option<&str>, default: u64, max: u64| -> ApiResult<u64> {
            let Some(text) = text else { return Ok(default) };
            text.parse::<u64>().ok().filter(|n| (1..=max).contains(n)).ok_or_else(|| {
                if max == u64::MAX {
                    ApiError::bad(format!("{name} must be a whole number from 1, not '{text}'"))
                } else {
                    ApiError::bad(format!("{name} must be a whole number from 1 to {max}, not '{text}'"))
                }
            })
        };
        Ok(PageRequest {
            start: number("pageStart", self.page_start.as_deref(), 1, u64::MAX)?,
            size: number("pageSize", self.page_size.as_deref(), MAX_PAGE_SIZE, MAX_PAGE_SIZE)?,
        })
    }
}

fn new_document_id() -> String {
    let mut bytes = [0u8; 16];
    rand::thread_rng().fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

pub(super) async fn recipients(ctx: &ApiContext, t: &Tenant, q: &CollectionQuery) -> ApiResult<s::RecipientPage> {
    let page = q.page()?;
    let now = ctx.clock.now_millis();
    let (id, info) = match &q.document_id {
        Some(id) => (id.clone(), t.db.use_document(id, now).await?.ok_or(ApiError::NotFound)?),
        None => {
            let condition = filter_condition(q.filter.as_deref(), &t.model.def, t)?;
            let id = new_document_id();
            let info = t.db.create_document(&id, condition.as_ref(), now).await?;
            (id, info)
        }
    };
    let total = info.size;
    if page.start > total && !(total == 0 && page.start == 1) {
        return Err(ApiError::NotFound);
    }
    let keys = t.db.document_keys(&id, page.start, page.size).await?;
    let content: Vec<Json> = crate::domain::recipients::by_keys(t, &keys).await?.iter().map(|r| recipient_json(&t.model, r)).collect();

    let href = |start: u64| format!("/recipients?objectResponse=true&documentId={id}&pageStart={start}&pageSize={}", page.size);
    let n = neighbours(page, total);
    let link = |rel: &str, start: u64| s::Link { rel: rel.into(), href: href(start) };
    let mut links = vec![link("first", n.first)];
    links.extend(n.prev.map(|prev| link("prev", prev)));
    links.push(link("self", page.start));
    links.extend(n.next.map(|next| link("next", next)));
    links.push(link("last", n.last));
    let info = s::PageInfo {
        document_id: id,
        page_start: page.start,
        page_size: page.size,
        number: (page.start - 1) / page.size + 1,
        total_elements: total,
        total_pages: total.div_ceil(page.size),
    };
    Ok(s::RecipientPage { links, content, page: info })
}
