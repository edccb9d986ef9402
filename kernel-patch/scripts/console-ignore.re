# Console lines matching the splat patterns of run-vm.sh that are known to
# be harmless, one extended regular expression a line.  Keep this short and
# say why for each.
