"""Write Herald extensions in Python, built into components with componentize-py.

Records are plain dicts of plain values, exactly as the REST API writes them: text as `str`,
NUMBER as `int` when whole (else `float`), BOOLEAN as `bool`, DATE (`YYYY-MM-DD`) and TIMESTAMP
(ISO 8601) as `str`, nothing as `None`. Platform calls that fail raise `HeraldError`, whose
`kind` is `not-found`, `invalid`, `conflict`, `forbidden` or `limit-exceeded`.

An http extension (world `herald:platform/http-extension`, or `open-http-extension` for an open
one) defines the export class and hands each call to a function::

    import herald_sdk as herald
    from wit_world import exports

    def hello(request: herald.Request) -> herald.Response:
        return herald.Response.json(200, {"hello": request.query("name") or "world"})

    class IncomingHandler(exports.IncomingHandler):
        def handle(self, request, response_out):
            herald.serve(hello, request, response_out)

Build it (the SDK is this folder, the WIT package Herald's `wit/`)::

    componentize-py -d wit -w herald:platform/http-extension componentize -p sdk/python -p . app -o app.wasm
    herald extension config app.wasm -o app.wasm --open     # its configuration, if any

Steps and conditions receive the recipient as the platform's fields: `herald.record(recipient)`
makes it a dict, `herald.context(context)` the triggering call's contextual data.
"""

import json as _json
from urllib.parse import parse_qs

from componentize_py_types import Err, Ok

__all__ = [
    "HeraldError",
    "Request",
    "Response",
    "context",
    "current_context",
    "global_data",
    "log",
    "recipients",
    "record",
    "secrets",
    "serve",
    "signatures",
    "tables",
]

# The largest whole number the platform keeps exactly (±(2^53 - 1)).
_MAX_EXACT = 9_007_199_254_740_991


def _optional(name):
    """The bindings of interface `name` if the world being built imports it. Imported when the
    component is built (a component cannot find modules later), so here, not in the functions."""
    import importlib

    try:
        return importlib.import_module(f"wit_world.imports.{name}")
    except ImportError:
        return None


# The platform's `types` interface is named so alone, or prefixed when the world also has
# wasi:http's `types`.
_wit_types = _optional("herald_platform_types") or _optional("types")
_recipients_read = _optional("recipients_read")
_recipients_write = _optional("recipients_write")
_tables = _optional("tables")
_global_data = _optional("global_data")
_context = _optional("context")
_log = _optional("log")
_secrets = _optional("secrets")
_signatures = _optional("signatures")
_http_types = _optional("wasi_http_types")


def _types():
    return _wit_types


def _need(module, interface):
    if module is None:
        raise HeraldError("forbidden", f"this extension's world does not import herald:platform/{interface}")
    return module


class HeraldError(Exception):
    """A platform call that the instance's data model or its limits refused."""

    def __init__(self, kind, message=""):
        super().__init__(f"{kind}: {message}" if message else kind)
        self.kind = kind
        self.message = message

    @staticmethod
    def _from(error):
        name = type(error).__name__.split("_", 1)[-1]
        kind = "".join("-" + c.lower() if c.isupper() else c for c in name).lstrip("-")
        return HeraldError(kind, getattr(error, "value", "") or "")


def _call(function, *args):
    try:
        return function(*args)
    except Err as e:
        raise HeraldError._from(e.value) from None


def to_value(value):
    """A Python value as the platform's value."""
    t = _types()
    if value is None:
        return t.Value_Null()
    if isinstance(value, bool):
        return t.Value_Boolean(value)
    if isinstance(value, (int, float)):
        return t.Value_Number(float(value))
    if isinstance(value, str):
        return t.Value_Text(value)
    raise TypeError(f"a field's value is text, a number, a boolean or None, not {type(value).__name__}")


def from_value(value):
    """The platform's value as a Python value (as the REST API writes it)."""
    t = _types()
    if isinstance(value, t.Value_Null):
        return None
    if isinstance(value, t.Value_Number):
        number = value.value
        return int(number) if number.is_integer() and abs(number) <= _MAX_EXACT else number
    return value.value


def record(fields):
    """The platform's fields as a dict."""
    return {field.name: from_value(field.value) for field in fields}


def _fields(values):
    t = _types()
    return [t.Field(name=name, value=to_value(value)) for name, value in values.items()]


def context(text):
    """The contextual data a step or condition is given (JSON text, or None) as Python data."""
    return None if text is None else _json.loads(text)


def current_context():
    """The contextual data of the call that triggered this execution, if any."""
    return context(_need(_context, "context").data())


class recipients:
    """The instance's recipients (Person Data as dicts). A recipient is named by a unique field
    and its value, for example `recipients.get("EMAIL", "ann@example.com")`."""

    @staticmethod
    def get(key_field, key):
        r = _need(_recipients_read, "recipients-read")
        found = _call(r.get, key_field, to_value(key))
        return None if found is None else record(found)

    @staticmethod
    def find(filter, limit=100):
        """Recipients matching an RSQL filter such as `CITY=="Paris";AGE>=18`."""
        r = _need(_recipients_read, "recipients-read")
        return [record(found) for found in _call(r.find, filter, limit)]

    @staticmethod
    def records(key_field, key, table, filter="", limit=100):
        """A recipient's One-To-Many records of `table`."""
        r = _need(_recipients_read, "recipients-read")
        return [record(found) for found in _call(r.records, key_field, to_value(key), table, filter, limit)]

    @staticmethod
    def create(person_data):
        w = _need(_recipients_write, "recipients-write")
        return record(_call(w.create, _fields(person_data)))

    @staticmethod
    def update(key_field, key, person_data):
        w = _need(_recipients_write, "recipients-write")
        return record(_call(w.update, key_field, to_value(key), _fields(person_data)))

    @staticmethod
    def upsert(person_data):
        """Creates or updates the recipient its Recipient Id, or else a unique field, names."""
        w = _need(_recipients_write, "recipients-write")
        return record(_call(w.upsert, _fields(person_data)))

    @staticmethod
    def delete(key_field, key):
        w = _need(_recipients_write, "recipients-write")
        return _call(w.delete, key_field, to_value(key))

    @staticmethod
    def upsert_records(key_field, key, table, records):
        """Creates or replaces One-To-Many records (dicts with the table's identifier)."""
        w = _need(_recipients_write, "recipients-write")
        return _call(w.upsert_records, key_field, to_value(key), table, [_fields(r) for r in records])

    @staticmethod
    def delete_records(key_field, key, table, ids):
        w = _need(_recipients_write, "recipients-write")
        return _call(w.delete_records, key_field, to_value(key), table, [to_value(i) for i in ids])

    @staticmethod
    def achieve_event(key_field, key, event):
        w = _need(_recipients_write, "recipients-write")
        _call(w.achieve_event, key_field, to_value(key), event)


class tables:
    """The instance's Global Data Tables."""

    @staticmethod
    def get(table, id):
        t = _need(_tables, "tables")
        found = _call(t.get, table, to_value(id))
        return None if found is None else record(found)

    @staticmethod
    def find(table, filter="", limit=100):
        t = _need(_tables, "tables")
        return [record(found) for found in _call(t.find, table, filter, limit)]

    @staticmethod
    def upsert(table, values):
        t = _need(_tables, "tables")
        _call(t.upsert, table, _fields(values))

    @staticmethod
    def delete(table, id):
        t = _need(_tables, "tables")
        return _call(t.delete, table, to_value(id))


class global_data:
    """The instance's Global Data, as text (like the REST API's VALUE)."""

    @staticmethod
    def get(name):
        g = _need(_global_data, "global-data")
        return _call(g.get, name)

    @staticmethod
    def set(name, value):
        g = _need(_global_data, "global-data")
        _call(g.set, name, str(value))


class secrets:
    """The instance's secrets: only an authheader extension's world offers them."""

    @staticmethod
    def get(name):
        s = _need(_secrets, "secrets")
        return _call(s.get, name)


class signatures:
    """Checking that a call comes from the system that says it sent it (http extensions only):
    Herald computes an HMAC-SHA256 keyed by one of the instance's secrets, which the extension
    names and never reads. At most 8 checks a call."""

    @staticmethod
    def verify_standard_webhook(secret, request, tolerance_seconds=300):
        """Whether `request` is signed by the Standard Webhooks scheme (headers webhook-id,
        webhook-timestamp, webhook-signature) with secret `secret`, sent within
        `tolerance_seconds` of now."""
        s = _need(_signatures, "signatures")
        return _call(
            s.verify_standard_webhook,
            secret,
            request.header("webhook-id") or "",
            request.header("webhook-timestamp") or "",
            request.header("webhook-signature") or "",
            request.body,
            tolerance_seconds,
        )

    @staticmethod
    def verify_hmac_sha256(secret, message, signature):
        """Whether `signature` (hex or base64, `sha256=` skipped) is the HMAC-SHA256 of `message`
        (bytes, or text as UTF-8) keyed by secret `secret`."""
        s = _need(_signatures, "signatures")
        data = message.encode("utf-8") if isinstance(message, str) else bytes(message)
        return _call(s.verify_hmac_sha256, secret, data, signature or "")


class log:
    """Lines kept with the execution for the instance's operator (`GET /extensions/logs/{id}`)."""

    @staticmethod
    def _write(level, message):
        wit_log = _need(_log, "log")
        wit_log.log(getattr(wit_log.Level, level), str(message))

    @staticmethod
    def debug(message):
        log._write("DEBUG", message)

    @staticmethod
    def info(message):
        log._write("INFO", message)

    @staticmethod
    def warn(message):
        log._write("WARN", message)

    @staticmethod
    def error(message):
        log._write("ERROR", message)


class Request:
    """A call as an http extension receives it: `path` is `/{path}?{query}` after the extension id."""

    def __init__(self, method, path, headers, body):
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body

    def path_only(self):
        return self.path.split("?", 1)[0]

    def query(self, name):
        """The first value of query parameter `name`, decoded; None when absent."""
        query = self.path.split("?", 1)[1] if "?" in self.path else ""
        values = parse_qs(query, keep_blank_values=True).get(name)
        return values[0] if values else None

    def header(self, name):
        return self.headers.get(name.lower())

    def json(self):
        """The body as JSON; raises ValueError with the reason when it is not."""
        return _json.loads(self.body.decode("utf-8"))


class Response:
    def __init__(self, status=200, body=b"", headers=None):
        self.status = status
        self.body = body.encode("utf-8") if isinstance(body, str) else bytes(body)
        self.headers = dict(headers or {})

    @staticmethod
    def json(status, data):
        return Response(status, _json.dumps(data), {"content-type": "application/json"})

    @staticmethod
    def text(status, text):
        return Response(status, text, {"content-type": "text/plain; charset=utf-8"})


def _method(method):
    name = type(method).__name__.split("_", 1)[-1]
    return method.value if name == "Other" else name.upper()


def _read(incoming):
    headers = {name.lower(): value.decode("utf-8", "replace") for name, value in incoming.headers().entries()}
    data = bytearray()
    body = incoming.consume()
    with body.stream() as stream:
        while True:
            try:
                data += stream.blocking_read(65536)
            except Err:
                break
    body.__exit__(None, None, None)
    return Request(_method(incoming.method()), incoming.path_with_query() or "/", headers, bytes(data))


def serve(handler, incoming, response_out):
    """Reads the call, runs `handler` (a Request to a Response) and writes its answer. An exception
    in the handler is answered 500 and its message logged."""
    h = _need(_http_types, "the wasi:http types (build with an http world)")
    request = _read(incoming)
    try:
        response = handler(request)
    except Exception as e:  # noqa: BLE001 (any exception is the author's bug: answered 500, and said in the log)
        log.error(f"{type(e).__name__}: {e}")
        response = Response.text(500, "the extension failed")
    headers = [(name, str(value).encode("utf-8")) for name, value in response.headers.items()]
    outgoing = h.OutgoingResponse(h.Fields.from_list(headers))
    outgoing.set_status_code(response.status)
    body = outgoing.body()
    h.ResponseOutparam.set(response_out, Ok(outgoing))
    with body.write() as stream:
        for start in range(0, len(response.body), 4096):
            stream.blocking_write_and_flush(response.body[start : start + 4096])
    h.OutgoingBody.finish(body, None)
