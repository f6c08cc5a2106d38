# debian/unit.sed — turns deploy/received-orders-feeder.service into the
# packaged unit (debian/rules): the program and the manual page where the
# package installs them, and install steps that fit the package.
s|^ExecStart=/usr/local/bin/|ExecStart=/usr/bin/|
/^Description=/a\
Documentation=man:received-orders-feeder(1)
/^# Install:$/,/enable --now/c\
# Installed by the Debian package received-orders-feeder, not enabled:\
#   install -m 640 /etc/received-orders-feeder/feeder.env.example \\\
#       /etc/received-orders-feeder/feeder.env     # then edit it\
#   systemctl enable --now received-orders-feeder
