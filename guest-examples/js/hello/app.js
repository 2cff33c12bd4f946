// The benchmark's trivial http extension in JavaScript: answers 200 `hello`. Built against the
// plain wasi:http/proxy world, so that it runs unchanged under `wasmtime serve` too (Herald serves
// it once `herald extension config --open` has opened it).
addEventListener("fetch", (event) => event.respondWith(new Response("hello", { headers: { "content-type": "text/plain" } })));
