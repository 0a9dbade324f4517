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
