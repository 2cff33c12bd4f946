// The reference page: Herald's own document, rendered by Swagger UI from files Herald serves
// (nothing from another host: no validator badge, no fonts). "Authorize" takes an instance's
// client id and secret (OAuth2 client credentials) and "Try it out" calls this server.
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: new URL("../openapi.json", window.location.href).toString(),
    dom_id: "#reference",
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: false,
    persistAuthorization: false,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
