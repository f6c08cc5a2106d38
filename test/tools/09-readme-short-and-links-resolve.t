#!/bin/bash
# test/tools/09-readme-short-and-links-resolve.t — the README stays the
# user's short document, and every page it sends a reader to exists.
#
# README.md must have fewer than 400 lines (what it does not say belongs in
# docs/).  Every relative link of README.md (docs/..., bench/README.md,
# LICENSE, ...) must name a file or directory of the tree, and every
# #anchor of a link to a Markdown file (or of an in-page link) must name a
# heading of that file, spelled as GitHub spells heading anchors (lower
# case, punctuation dropped, spaces as hyphens, -1, -2 for repeats;
# headings inside fenced code are no headings).  Negative controls: a
# README of 400 lines, one linking a docs/ file that does not exist and one
# linking an anchor no heading has are each caught.

set -euo pipefail

RO_ROOT=${RO_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)}
export RO_ROOT
# shellcheck source=test/lib/common.sh
. "$RO_ROOT/test/lib/common.sh"

README_MAX_LINES=399

tap_plan 6

WORK=$(mktemp -d "${TMPDIR:-/tmp}/ro-readme-test.XXXXXX")
ro_on_exit "rm -rf -- '$WORK'"

# readme_broken_links FILE — each relative link of FILE that does not
# resolve against the tree's root, one per line with the reason; nothing
# when all resolve
readme_broken_links() {
	perl -e '
		use strict;
		use warnings;
		my ($file, $root) = @ARGV;

		# anchors(PATH) — the GitHub anchors of the headings of a Markdown file
		my %cache;
		sub anchors {
			my ($path) = @_;
			return $cache{$path} if $cache{$path};
			my (%seen, %anchors);
			my $fence = 0;
			open(my $fh, "<:encoding(UTF-8)", $path) or die "$path: $!\n";
			while (my $line = <$fh>) {
				if ($line =~ /^\s*(```|~~~)/) { $fence = !$fence; next; }
				next if $fence;
				next unless $line =~ /^#{1,6}\s+(.*?)\s*#*\s*$/;
				my $slug = lc $1;
				$slug =~ s/[^\w\- ]//g;
				$slug =~ s/ /-/g;
				my $n = $seen{$slug}++;
				$anchors{$n ? "$slug-$n" : $slug} = 1;
			}
			close $fh;
			return $cache{$path} = \%anchors;
		}

		open(my $fh, "<:encoding(UTF-8)", $file) or die "$file: $!\n";
		my $text = do { local $/; <$fh> };
		close $fh;
		# links in fenced code are no links
		$text =~ s/^\s*```.*?^\s*```//msg;
		binmode STDOUT, ":encoding(UTF-8)";
		while ($text =~ /\]\(([^)\s]+)\)/g) {
			my $link = $1;
			next if $link =~ m{^[a-z][a-z0-9+.-]*:}i;    # http:, mailto:, ...
			my ($path, $anchor) = split /#/, $link, 2;
			my $target = $path eq "" ? $file : "$root/$path";
			if (!-e $target) {
				print "$link: no such file\n";
				next;
			}
			next unless defined $anchor && $target =~ /\.md$/;
			print "$link: no heading #$anchor in ", ($path eq "" ? "the README" : $path), "\n"
				unless anchors($target)->{$anchor};
		}
	' "$1" "$RO_ROOT"
}

lines=$(wc -l <"$RO_ROOT/README.md")
status=0
((lines <= README_MAX_LINES)) || status=$?
tap_ok "$status" "README.md has fewer than 400 lines ($lines): the rest belongs in docs/"

broken=$(readme_broken_links "$RO_ROOT/README.md" | grep -v ': no heading #' || true)
tap_is "$broken" "" "every relative link of README.md names a file of the tree"

broken=$(readme_broken_links "$RO_ROOT/README.md" | grep ': no heading #' || true)
tap_is "$broken" "" "every #anchor of README.md's links names a heading of its file"

# negative controls, on copies of the README
cp "$RO_ROOT/README.md" "$WORK/README.long"
while (($(wc -l <"$WORK/README.long") < README_MAX_LINES + 1)); do
	echo "padding" >>"$WORK/README.long"
done
status=0
(($(wc -l <"$WORK/README.long") > README_MAX_LINES)) || status=$?
tap_ok "$status" "negative control: a README of 400 lines is over the limit"

sed 's|(docs/feeder\.md)|(docs/no-such-page.md)|' "$RO_ROOT/README.md" >"$WORK/README.nofile"
tap_like "$(readme_broken_links "$WORK/README.nofile")" 'docs/no-such-page\.md: no such file' \
	"negative control: a link to a docs/ file that does not exist is caught"

sed 's|(docs/feeder\.md#positions)|(docs/feeder.md#no-such-heading)|' "$RO_ROOT/README.md" >"$WORK/README.noanchor"
tap_like "$(readme_broken_links "$WORK/README.noanchor")" 'docs/feeder\.md#no-such-heading: no heading' \
	"negative control: a link to an anchor no heading of docs/feeder.md has is caught"

tap_done
