#!/usr/bin/env bash
# Type-checks goalkeeper's pi extension (src/integrations/pi/goalkeeper.ts)
# with the TypeScript pi is built with, against the types of the pinned pi
# (both installed from npm by scripts/install-host.sh), strict.
set -euo pipefail
cd "$(dirname "$0")/.."
tsc="$(scripts/install-host.sh typescript)"
pi="$(scripts/install-host.sh pi)"
modules="$(dirname "$(dirname "$pi")")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp src/integrations/pi/goalkeeper.ts "$work/"
ln -s "$modules" "$work/node_modules"
# An ES module, as pi loads it (it reads `import.meta.url`).
echo '{"type": "module"}' > "$work/package.json"
cat > "$work/tsconfig.json" <<'JSON'
{
  "compilerOptions": {
    "strict": true,
    "noEmit": true,
    "noUnusedLocals": true,
    "noUnusedParameters": true,
    "target": "ES2022",
    "module": "NodeNext",
    "moduleResolution": "NodeNext",
    "types": ["node"],
    "skipLibCheck": true
  },
  "files": ["goalkeeper.ts"]
}
JSON
"$tsc" -p "$work/tsconfig.json"
echo "pi extension: type-checks with $("$tsc" --version)"
