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
        <title>XML Sitemap</title>
        <style>
          body { font: 14px/1.5 system-ui, sans-serif; margin: 2rem; color: #222; }
          table { border-collapse: collapse; width: 100%; }
          th, td { text-align: left; padding: .3rem .6rem; border-bottom: 1px solid #ddd; }
          th { cursor: pointer; background: #f4f4f4; user-select: none; }
          th.asc::after { content: " \25B2"; } th.desc::after { content: " \25BC"; }
          td.num { text-align: right; }
          p.note { color: #666; }
        </style>
      </head>
      <body>
        <h1>XML Sitemap</h1>
        <!-- link to the HTML view -->
        <xsl:apply-templates select="sm:urlset|sm:sitemapindex"/>
        <script>
          // Click a column header to sort by it; click again to reverse.
          // "#sort=2-desc" in the address sorts by the third column on load (shareable views).
          function sortBy(table, col, asc) {
            var body = table.tBodies[0];
            var heads = table.tHead.rows[0].cells;
            for (var i = 0; i &lt; heads.length; i++) { heads[i].className = ""; }
            heads[col].className = asc ? "asc" : "desc";
            var rows = Array.prototype.slice.call(body.rows);
            rows.sort(function (a, b) {
              var x = a.cells[col].textContent, y = b.cells[col].textContent;
              // Number(), not parseFloat(): "2024-01-30" must sort as text, not as 2024.
              var nx = x.trim() === "" ? NaN : Number(x), ny = y.trim() === "" ? NaN : Number(y);
              var cmp = (!isNaN(nx) &amp;&amp; !isNaN(ny)) ? nx - ny : x.localeCompare(y);
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
        </script>
      </body>
    </html>
  </xsl:template>

  <xsl:template match="sm:urlset">
    <p class="note">This sitemap lists <strong id="count"><xsl:value-of select="count(sm:url)"/></strong> URLs.</p>
    <table class="sortable" id="urls">
      <thead><tr><th>URL</th><th>Last modified</th><th>Change frequency</th><th>Priority</th><th>Extensions</th></tr></thead>
      <tbody>
        <xsl:for-each select="sm:url">
          <tr>
            <td><a href="{sm:loc}"><xsl:value-of select="sm:loc"/></a></td>
            <td><xsl:value-of select="sm:lastmod"/></td>
            <td><xsl:value-of select="sm:changefreq"/></td>
            <td class="num"><xsl:value-of select="sm:priority"/></td>
            <td class="num"><xsl:value-of select="count(image:image|video:video|news:news|xhtml:link)"/></td>
          </tr>
        </xsl:for-each>
      </tbody>
    </table>
  </xsl:template>

  <xsl:template match="sm:sitemapindex">
    <p class="note">This index lists <strong id="count"><xsl:value-of select="count(sm:sitemap)"/></strong> sitemaps.</p>
    <table class="sortable" id="sitemaps">
      <thead><tr><th>Sitemap</th><th>Last modified</th></tr></thead>
      <tbody>
        <xsl:for-each select="sm:sitemap">
          <tr>
            <td><a href="{sm:loc}"><xsl:value-of select="sm:loc"/></a></td>
            <td><xsl:value-of select="sm:lastmod"/></td>
          </tr>
        </xsl:for-each>
      </tbody>
    </table>
  </xsl:template>
</xsl:stylesheet>
