<?xml version="1.0" encoding="UTF-8"?>
<!-- Human view of sitemaps served by sitemap_middleware: crawlers ignore it. -->
<xsl:stylesheet version="1.0"
    xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"
    xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
    xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"
    xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"
    xmlns:xhtml="http://www.w3.org/1999/xhtml"
    exclude-result-prefixes="sm image video news xhtml">
  <xsl:output method="html" encoding="UTF-8" indent="yes"/>

  <xsl:template match="/">
    <html lang="en">
      <head>
        <meta charset="utf-8"/>
        <meta name="viewport" content="width=device-width, initial-scale=1"/>
        <title>XML Sitemap</title>
        <style>
          body { font: 14px/1.5 system-ui, sans-serif; margin: 2rem; color: #222; }
          table { border-collapse: collapse; width: 100%; }
          th, td { text-align: left; padding: .3rem .6rem; border-bottom: 1px solid #ddd; }
          th { cursor: pointer; background: #f4f4f4; user-select: none; white-space: nowrap; }
          th.asc::after { content: " \25B2"; } th.desc::after { content: " \25BC"; }
          td.url { overflow-wrap: anywhere; }
          .num { text-align: right; font-variant-numeric: tabular-nums; }
          time { white-space: nowrap; }
          p.note { color: #666; }
          #html-view { color: #222; background: #e8f0fe; padding: .5rem .75rem; border-radius: .25rem; }
          #html-view a { font-weight: 600; }
          /* A phone: one line per URL (its path: the origin is the site's), and its date. */
          @media (max-width: 37.5rem) {
            body { margin: .5rem; }
            h1 { font-size: 1.25rem; }
            #urls th:nth-child(n+3), #urls td:nth-child(n+3), .origin, .clock { display: none; }
            td.url { max-width: 0; width: 100%; white-space: nowrap; overflow: hidden;
              text-overflow: ellipsis; }
          }
        </style>
      </head>
      <body>
        <!-- link to the HTML view -->
        <h1>XML Sitemap</h1>
        <xsl:apply-templates select="sm:urlset|sm:sitemapindex"/>
        <script>
          // Click a column header to sort by it; click again to reverse.
          // "#sort=2-desc" in the address sorts by the third column on load (shareable views).
          function key(cell) {
            var time = cell.querySelector("time");
            if (time) { return Date.parse(time.getAttribute("datetime")); }
            var text = cell.textContent.trim();
            // Number(), not parseFloat(): "2024-01-30" must sort as text, not as 2024.
            var number = text === "" ? NaN : Number(text.replace(/,/g, ""));
            return isNaN(number) ? text : number;
          }
          function sortBy(table, col, asc) {
            var body = table.tBodies[0];
            var heads = table.tHead.rows[0].cells;
            for (var i = 0; i &lt; heads.length; i++) { heads[i].className = ""; }
            heads[col].className = asc ? "asc" : "desc";
            var rows = Array.prototype.slice.call(body.rows);
            rows.sort(function (a, b) {
              var x = key(a.cells[col]), y = key(b.cells[col]);
              var cmp = (typeof x === "number" &amp;&amp; typeof y === "number") ? x - y
                : String(x).localeCompare(String(y));
              return asc ? cmp : -cmp;
            });
            rows.forEach(function (r) { body.appendChild(r); });
          }
          document.querySelectorAll("table.sortable").forEach(function (table) {
            Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
              th.addEventListener("click", function () {
                sortBy(table, col, th.className !== "asc");
              });
            });
            var wanted = /sort=(\d+)-(asc|desc)/.exec(location.hash);
            if (wanted &amp;&amp; table.tHead.rows[0].cells[+wanted[1]]) {
              sortBy(table, +wanted[1], wanted[2] === "asc");
            }
          });
          // The HTML view of this very page: sitemap-news-1.xml (or -1~key.xml) has
          // sitemap-news-1.html; anything else, the index view.
          var link = document.getElementById("html-view-link");
          if (link) {
            var name = location.pathname.split("/").pop();
            var xml = link.getAttribute("data-xml-prefix");
            var page = name.indexOf(xml) === 0
              ? /^(.+-\d+)(?:~[^.\/]*)?\.xml$/.exec(name.slice(xml.length)) : null;
            if (page) {
              link.href = link.getAttribute("data-view-prefix") + page[1] + ".html";
              link.textContent = "Open the HTML view of this page";
            }
          }
          // Chromium's XSLT warning (a popover fixed at the top) would cover that link:
          // the page starts below it, whatever its height, and moves up once it closes.
          function clearBanner() {
            var banner = document.querySelector("xslt-warning-banner");
            var box = banner ? banner.getBoundingClientRect() : null;
            var below = box &amp;&amp; box.height > 0 &amp;&amp; box.top &lt; 1 ? Math.ceil(box.bottom) : 0;
            document.body.style.paddingTop = below ? below + "px" : "";
          }
          clearBanner();
          window.addEventListener("load", clearBanner);
          window.addEventListener("resize", clearBanner);
          document.addEventListener("toggle", clearBanner, true);
          new MutationObserver(clearBanner).observe(document.body, { childList: true });
        </script>
      </body>
    </html>
  </xsl:template>

  <!-- "27 Nov 2026 14:03 UTC" of a W3C date; the value itself in <time datetime>. -->
  <xsl:template name="when">
    <xsl:param name="d"/>
    <xsl:if test="$d">
      <time datetime="{$d}">
        <xsl:choose>
          <xsl:when test="string-length($d) &gt;= 10">
            <xsl:value-of select="number(substring($d, 9, 2))"/>
            <xsl:text> </xsl:text>
            <xsl:value-of select="substring('JanFebMarAprMayJunJulAugSepOctNovDec', number(substring($d, 6, 2)) * 3 - 2, 3)"/>
            <xsl:text> </xsl:text>
            <xsl:value-of select="substring($d, 1, 4)"/>
            <xsl:if test="string-length($d) &gt; 10">
              <span class="clock">
                <xsl:text> </xsl:text>
                <xsl:value-of select="substring($d, 12, 5)"/>
                <xsl:variable name="zone" select="substring($d, string-length($d) - 5)"/>
                <xsl:choose>
                  <xsl:when test="substring($d, string-length($d)) = 'Z' or $zone = '+00:00'"> UTC</xsl:when>
                  <xsl:otherwise><xsl:text> </xsl:text><xsl:value-of select="$zone"/></xsl:otherwise>
                </xsl:choose>
              </span>
            </xsl:if>
          </xsl:when>
          <xsl:otherwise><xsl:value-of select="$d"/></xsl:otherwise>
        </xsl:choose>
      </time>
    </xsl:if>
  </xsl:template>

  <!-- A URL as a link; the site's origin in a span a phone hides. -->
  <xsl:template name="link">
    <xsl:param name="url"/>
    <xsl:param name="site"/>
    <a href="{$url}">
      <xsl:choose>
        <xsl:when test="$site and starts-with($url, concat($site, '/'))">
          <span class="origin"><xsl:value-of select="$site"/></span>
          <xsl:value-of select="substring($url, string-length($site) + 1)"/>
        </xsl:when>
        <xsl:otherwise><xsl:value-of select="$url"/></xsl:otherwise>
      </xsl:choose>
    </a>
  </xsl:template>

  <xsl:template name="origin">
    <xsl:param name="url"/>
    <xsl:variable name="rest" select="substring-after($url, '://')"/>
    <xsl:if test="$rest">
      <xsl:value-of select="concat(substring-before($url, '://'), '://', substring-before(concat($rest, '/'), '/'))"/>
    </xsl:if>
  </xsl:template>

  <xsl:template match="sm:urlset">
    <xsl:variable name="site">
      <xsl:call-template name="origin"><xsl:with-param name="url" select="sm:url[1]/sm:loc"/></xsl:call-template>
    </xsl:variable>
    <p class="note">This sitemap lists <strong id="count"><xsl:value-of select="format-number(count(sm:url), '#,##0')"/></strong> URLs.</p>
    <table class="sortable" id="urls">
      <thead><tr><th>URL</th><th>Last modified</th><th>Change frequency</th><th>Priority</th><th>Extensions</th></tr></thead>
      <tbody>
        <xsl:for-each select="sm:url">
          <tr>
            <td class="url"><xsl:call-template name="link"><xsl:with-param name="url" select="sm:loc"/><xsl:with-param name="site" select="$site"/></xsl:call-template></td>
            <td><xsl:call-template name="when"><xsl:with-param name="d" select="sm:lastmod"/></xsl:call-template></td>
            <td><xsl:value-of select="sm:changefreq"/></td>
            <td class="num"><xsl:value-of select="sm:priority"/></td>
            <td class="num"><xsl:value-of select="count(image:image|video:video|news:news|xhtml:link)"/></td>
          </tr>
        </xsl:for-each>
      </tbody>
    </table>
  </xsl:template>

  <xsl:template match="sm:sitemapindex">
    <xsl:variable name="site">
      <xsl:call-template name="origin"><xsl:with-param name="url" select="sm:sitemap[1]/sm:loc"/></xsl:call-template>
    </xsl:variable>
    <p class="note">This index lists <strong id="count"><xsl:value-of select="format-number(count(sm:sitemap), '#,##0')"/></strong> sitemaps.</p>
    <table class="sortable" id="sitemaps">
      <thead><tr><th>Sitemap</th><th>Last modified</th></tr></thead>
      <tbody>
        <xsl:for-each select="sm:sitemap">
          <tr>
            <td class="url"><xsl:call-template name="link"><xsl:with-param name="url" select="sm:loc"/><xsl:with-param name="site" select="$site"/></xsl:call-template></td>
            <td><xsl:call-template name="when"><xsl:with-param name="d" select="sm:lastmod"/></xsl:call-template></td>
          </tr>
        </xsl:for-each>
      </tbody>
    </table>
  </xsl:template>
</xsl:stylesheet>
