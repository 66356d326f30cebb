// Follows the page's stream of changes and swaps in the page's main
// element, fetched again, when something it shows changes.
(function () {
  var src = document.body.getAttribute('data-live');
  if (!src || !window.EventSource) return;
  var timer = null;
  var stream = new EventSource(src);
  stream.addEventListener('change', function () {
    clearTimeout(timer);
    timer = setTimeout(function () {
      fetch(location.href, {credentials: 'same-origin', cache: 'no-store'})
        .then(function (r) { return r.ok ? r.text() : null; })
        .then(function (html) {
          if (!html) return;
          var next = new DOMParser().parseFromString(html, 'text/html').querySelector('main');
          var current = document.querySelector('main');
          if (next && current) {
            current.replaceWith(next);
            document.body.setAttribute('data-updated', String(Date.now()));
          }
        });
    }, 200);
  });
})();
