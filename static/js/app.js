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
