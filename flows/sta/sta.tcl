# capsgen synth --target asic-osu018: OpenSTA on the mapped netlist with the generated SDC.
# Template filled in by capsgen; run again by hand:  sta -no_init -exit <this script>
# The CAPSGEN-SECTION lines delimit the reports that capsgen parses.
read_liberty {{LIBERTY}}
read_verilog {{NETLIST}}
link_design {{TOP}}
read_sdc {{SDC}}

puts "CAPSGEN-SECTION registers [llength [all_registers]]"
if {[llength [all_registers]] > 0} {
  puts "CAPSGEN-SECTION reg2reg"
  report_checks -path_delay max -from [all_registers -clock_pins] -to [all_registers -data_pins] -digits 4
}
puts "CAPSGEN-SECTION worst"
report_checks -path_delay max -digits 4
puts "CAPSGEN-SECTION in2reg"
report_checks -path_delay max -from [all_inputs] -digits 4
puts "CAPSGEN-SECTION reg2out"
report_checks -path_delay max -to [all_outputs] -digits 4
puts "CAPSGEN-SECTION hold"
report_checks -path_delay min -digits 4
if {[llength [all_registers]] > 0} {
  puts "CAPSGEN-SECTION hold_reg2reg"
  report_checks -path_delay min -from [all_registers -clock_pins] -to [all_registers -data_pins] -digits 4
}
puts "CAPSGEN-SECTION summary"
report_wns -digits 4
report_tns -digits 4
puts "CAPSGEN-SECTION end"
