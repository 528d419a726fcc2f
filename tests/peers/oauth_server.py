"""An OAuth-protected MCP server on loopback for mws's end-to-end login test, built with the Python
SDK's server-side auth: its own authorization server (dynamic registration, PKCE, refresh) whose
authorization endpoint approves at once (redirects straight back with a code), access tokens that
expire after EXPIRES seconds, and `POST /revoke-all` to revoke every token (no auth; loopback
test only). Scopes: `mcp` (required) and `admin` (granted when asked for). Usage:
oauth_server.py PORT EXPIRES. One tool: `echo`."""

import secrets
import sys
import time

from starlette.requests import Request
from starlette.responses import JSONResponse

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

PORT = int(sys.argv[1])
EXPIRES = int(sys.argv[2])
BASE = f"http://127.0.0.1:{PORT}"


class Provider:
    def __init__(self):
        self.clients, self.codes, self.access, self.refresh = {}, {}, {}, {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, info: OAuthClientInformationFull):
        self.clients[info.client_id] = info

    async def authorize(self, client, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code, scopes=params.scopes or ["mcp"], expires_at=time.time() + 300,
            client_id=client.client_id, code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource)
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, code):
        return self.codes.get(code)

    def _issue(self, client_id, scopes, resource):
        at, rt = "at-" + secrets.token_urlsafe(24), "rt-" + secrets.token_urlsafe(24)
        self.access[at] = AccessToken(token=at, client_id=client_id, scopes=scopes,
                                      expires_at=int(time.time()) + EXPIRES, resource=resource)
        self.refresh[rt] = RefreshToken(token=rt, client_id=client_id, scopes=scopes,
                                        resource=resource)
        return OAuthToken(access_token=at, expires_in=EXPIRES, scope=" ".join(scopes),
                          refresh_token=rt)

    async def exchange_authorization_code(self, client, code: AuthorizationCode):
        self.codes.pop(code.code, None)
        return self._issue(client.client_id, code.scopes, code.resource)

    async def load_refresh_token(self, client, refresh_token):
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(self, client, refresh_token: RefreshToken, scopes):
        self.refresh.pop(refresh_token.token, None)
        print("refreshed", flush=True, file=sys.stderr)
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token):
        t = self.access.get(token)
        if t and t.expires_at and t.expires_at < time.time():
            return None
        return t

    async def revoke_token(self, token):
        self.access.pop(getattr(token, "token", ""), None)


provider = Provider()
server = MCPServer(
    "oauth-fixture",
    auth_server_provider=provider,
    auth=AuthSettings(
        issuer_url=BASE,
        resource_server_url=f"{BASE}/mcp",
        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["mcp", "admin"],
                                                              default_scopes=["mcp"]),
        required_scopes=["mcp"],
        validate_token_resource=True,
    ),
)


@server.tool()
def echo(text: str) -> str:
    """Echoes the text back."""
    return text


@server.custom_route("/revoke-all", methods=["POST"])
async def revoke_all(request: Request):
    n = len(provider.access) + len(provider.refresh)
    provider.access.clear()
    provider.refresh.clear()
    return JSONResponse({"revoked": n})


server.run(transport="streamable-http", host="127.0.0.1", port=PORT)
