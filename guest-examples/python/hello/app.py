"""The benchmark's trivial http extension in Python: answers 200 `hello`. Built against the plain
wasi:http/proxy world (no SDK: the world has none of Herald's interfaces), so that it runs
unchanged under `wasmtime serve` too."""

from componentize_py_types import Ok
from wit_world import exports
from wit_world.imports.types import Fields, OutgoingBody, OutgoingResponse, ResponseOutparam


class IncomingHandler(exports.IncomingHandler):
    def handle(self, request, response_out):
        response = OutgoingResponse(Fields.from_list([("content-type", b"text/plain")]))
        body = response.body()
        ResponseOutparam.set(response_out, Ok(response))
        with body.write() as stream:
            stream.blocking_write_and_flush(b"hello")
        OutgoingBody.finish(body, None)
