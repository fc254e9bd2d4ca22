#!/bin/bash
# make docs-png: render the new documents' HTML pages (built by
# make check-docs) to PNG, to look at them: build/docs-png/*.png.
. "$(dirname "$0")/harness/common.sh"
set -e
PKGS="wkhtmltopdf fonts-wqy-microhei python3-pil"
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' && continue
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		$PKGS >/dev/null || die "apt-get install $PKGS failed"
	break
done
html=$(find "$BUILD/docs" -type d -name output -print -quit)
[ -n "$html" ] || die "no HTML (make check-docs)"
out=$BUILD/docs-png
mkdir -p "$out"
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
for page in trace/function-based-events translations/zh_CN/trace/index \
	    translations/zh_CN/trace/kprobetrace \
	    translations/zh_CN/trace/function-based-events; do
	src=$html/$page.html
	[ -f "$src" ] || die "missing $src"
	png=$out/$(echo "$page" | tr / _)
	# The first screen to look at, and the whole page at half size
	wkhtmltoimage --quiet --enable-local-file-access --width 1000 \
		--height 1400 "file://$src" "$png.png" 2>/dev/null &&
	wkhtmltoimage --quiet --enable-local-file-access --width 1000 \
		--zoom 0.5 "file://$src" "$png-full.png" 2>/dev/null ||
		die "wkhtmltoimage failed for $page"
	say "docs-png: ${png#"$TOP"/}.png, ${png#"$TOP"/}-full.png"
done
# wkhtmltoimage writes PNGs without compression: compress them when
# Debian's Pillow is there.
if /usr/bin/python3 -c 'import PIL' 2>/dev/null; then
	/usr/bin/python3 - "$out"/*.png <<'PY'
import sys
from PIL import Image
for p in sys.argv[1:]:
    Image.open(p).convert('RGB').save(p, optimize=True)
PY
fi
