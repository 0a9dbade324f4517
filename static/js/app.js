// Progressive enhancement only: every page works without this file.
document.documentElement.classList.add("js");
// A select marked data-autosubmit submits its form on change (also after htmx swaps), so its
// fallback button is hidden by the stylesheet when this script runs.
document.addEventListener("change", (event) => {
  const select = event.target;
  if (select instanceof HTMLSelectElement && select.hasAttribute("data-autosubmit") && select.form) {
    select.form.requestSubmit();
  }
});
// A button marked data-copy="<id>" copies the text of the element with that id.
document.addEventListener("click", (event) => {
  const button = event.target instanceof Element ? event.target.closest("[data-copy]") : null;
  const source = button && document.getElementById(button.dataset.copy);
  if (source && navigator.clipboard) {
    navigator.clipboard.writeText(source.textContent.trim()).then(() => {
      button.dataset.copied = "true";
    });
  }
});
// A plain form marked data-confirm="<question>" asks before it is sent (htmx's hx-confirm asks
// only before the requests htmx itself makes).
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
  }
});
