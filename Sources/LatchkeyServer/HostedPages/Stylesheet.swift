/// The one stylesheet of the hosted pages, served at ``path`` with a long cache lifetime.
///
/// One column, system fonts, tap targets at least 44 points high, visible focus rings, and dark
/// colours when the system asks for them (`prefers-color-scheme`). No page carries a `style`
/// attribute or element: the pages' `Content-Security-Policy` admits this file alone.
enum Stylesheet {
    /// Where the pages link it.
    static let path = "/oauth/style.css"

    /// The CSS.
    static let text = """
        :root {
          color-scheme: light dark;
          --text: #1c1c1e; --muted: #5b5b60; --background: #f2f2f7; --card: #ffffff;
          --border: #c7c7cc; --accent: #0a5cc2; --accent-text: #ffffff;
          --error: #b3261e; --error-background: #fdecea;
        }
        @media (prefers-color-scheme: dark) {
          :root {
            --text: #f2f2f7; --muted: #aeaeb2; --background: #000000; --card: #1c1c1e;
            --border: #48484a; --accent: #4c9aff; --accent-text: #000000;
            --error: #ffb4ab; --error-background: #3b1512;
          }
        }
        *, *::before, *::after { box-sizing: border-box; }
        html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
        body {
          margin: 0; background: var(--background); color: var(--text);
          font: 17px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", sans-serif;
        }
        main {
          max-width: 28rem; margin: 0 auto; padding: 2rem 1.25rem 3rem;
        }
        .card {
          background: var(--card); border: 1px solid var(--border); border-radius: 14px; padding: 1.5rem 1.25rem;
        }
        h1 { font-size: 1.6rem; line-height: 1.25; margin: 0 0 0.5rem; }
        p { margin: 0 0 1rem; }
        .lead { color: var(--muted); }
        .alert {
          background: var(--error-background); color: var(--error); border: 1px solid currentColor;
          border-radius: 10px; padding: 0.75rem 1rem; margin: 0 0 1rem; font-weight: 600;
        }
        form { margin: 0; }
        .field { margin: 0 0 1rem; }
        label { display: block; font-weight: 600; margin: 0 0 0.35rem; }
        .hint { display: block; color: var(--muted); font-size: 0.9rem; margin: 0 0 0.35rem; }
        input[type="text"], input[type="password"], input[type="email"] {
          display: block; width: 100%; min-height: 48px; padding: 0.6rem 0.75rem; font: inherit; color: var(--text);
          background: var(--background); border: 1px solid var(--border); border-radius: 10px;
        }
        input[readonly] { color: var(--muted); background: transparent; }
        .button, button {
          display: block; width: 100%; min-height: 48px; margin: 0 0 0.75rem; padding: 0.7rem 1rem;
          font: inherit; font-weight: 600; text-align: center; text-decoration: none; cursor: pointer;
          border-radius: 10px; border: 1px solid var(--accent); background: var(--accent); color: var(--accent-text);
        }
        .button.secondary, button.secondary { background: transparent; color: var(--accent); }
        input:focus-visible, .button:focus-visible, button:focus-visible, a:focus-visible {
          outline: 3px solid var(--accent); outline-offset: 2px;
        }
        a { color: var(--accent); }
        .links { margin: 1rem 0 0; text-align: center; }
        .links p { margin: 0 0 0.5rem; }
        .separator { text-align: center; color: var(--muted); margin: 0.5rem 0 0.75rem; }
        ul.scopes { margin: 0 0 1.25rem; padding-left: 1.25rem; }
        ul.scopes li { margin: 0 0 0.4rem; }
        svg.chart { display: block; width: 100%; height: auto; margin: 0 0 1rem; }
        .chart-ok { fill: var(--accent); }
        .chart-failed { fill: var(--error); }
        .chart-label { fill: var(--muted); }
        .chart-axis { stroke: var(--border); }
        main.wide { max-width: 64rem; }
        nav.console { display: flex; flex-wrap: wrap; align-items: center; gap: 0.25rem 1rem; margin: 0 0 1rem; }
        nav.console [aria-current] { font-weight: 600; text-decoration: none; }
        h2 { font-size: 1.2rem; margin: 1.5rem 0 0.5rem; }
        form.inline { display: inline-block; margin: 0 0.25rem 0.25rem 0; }
        form.search { display: flex; gap: 0.5rem; margin: 0 0 1rem; }
        form.search button { width: auto; margin: 0; }
        button.small, .button.small { display: inline-block; width: auto; min-height: 36px; margin: 0; padding: 0.3rem 0.8rem; }
        button.danger, .button.danger { background: var(--error); border-color: var(--error); color: var(--card); }
        .table { overflow-x: auto; margin: 0 0 1rem; }
        table { border-collapse: collapse; width: 100%; font-size: 0.95rem; }
        th, td { text-align: left; vertical-align: top; padding: 0.4rem 0.5rem; border-bottom: 1px solid var(--border); overflow-wrap: anywhere; }
        dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; margin: 0 0 1rem; }
        dl.facts dt { font-weight: 600; }
        dl.facts dd { margin: 0; overflow-wrap: anywhere; }
        code.secret { display: block; padding: 0.75rem; overflow-wrap: anywhere; border: 1px solid var(--border); border-radius: 10px; }
        """
}
