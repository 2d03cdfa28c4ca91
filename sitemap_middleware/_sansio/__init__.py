"""Pure, I/O-free protocol rules: values, URLs, rendering, HTTP rules."""
