// oidc-provider 9.13.3 with its built-in client_credentials grant and
// RFC 9068 JWT access tokens for one resource server: the baseline grant of
// issue 30 against a third-party server (oidcprovider_test.go). The package
// is imported from OIDC_PROVIDER (a file URL of its lib/index.js), so that
// this script runs from the repository while node_modules is elsewhere.
const { default: Provider, errors } = await import(process.env.OIDC_PROVIDER);

const SECRET = process.env.CLIENT_SECRET;
const PORT = Number(process.env.PORT);
const ISSUER = `http://127.0.0.1:${PORT}`;
const RESOURCE = 'https://mcp.example.internal/mcp';

const provider = new Provider(ISSUER, {
  clients: [
    // perf-agent-0 may use client_credentials; perf-agent-1 may not.
    { client_id: 'perf-agent-0', client_secret: SECRET, token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['client_credentials'], response_types: [], redirect_uris: [] },
    { client_id: 'perf-agent-1', client_secret: SECRET, token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code'], response_types: ['code'], redirect_uris: ['https://rp.example/cb'] },
  ],
  features: {
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => RESOURCE,
      getResourceServerInfo: (ctx, resource) => {
        if (resource !== RESOURCE) throw new errors.InvalidTarget();
        return { scope: 'mcp:tools:invoke', audience: RESOURCE, accessTokenFormat: 'jwt', accessTokenTTL: 300, jwt: { sign: { alg: 'RS256' } } };
      },
    },
  },
});
provider.on('server_error', (ctx, err) => console.error('server_error', err));

provider.listen(PORT, '127.0.0.1', () => console.log(JSON.stringify({ issuer: ISSUER, pid: process.pid })));
